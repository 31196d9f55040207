import type { Delivery } from '../../store/contract/index.js';
import type { GateStage } from './stage.js';

/** Lines remembered at most: past it, floors already passed are let go first, then the oldest. */
const MAX_FLOORS = 100_000;

/**
 * The receivers' `Retry-After`s this replica was answered, by line (adapter,
 * tenant, kind, key), on its monotonic clock. The store keeps a floor with
 * each delivery it holds; a replica also sends from its fail-open journal,
 * whose deliveries of a key are other rows the store's floor does not reach.
 * This one floor per line, for both, keeps the receiver's word whichever
 * row goes next.
 */
export class ReceiverFloors {
  private readonly floors = new Map<string, number>();

  constructor(private readonly now: () => number) {}

  private static line(d: Delivery): string {
    return `${d.adapter}\u0000${d.entry.tenant}\u0000${d.entry.kind}\u0000${d.entry.key}`;
  }

  /** The receiver asked this line to wait `ms`. */
  note(d: Delivery, ms: number): void {
    const line = ReceiverFloors.line(d);
    const until = this.now() + ms;
    if (this.floors.size >= MAX_FLOORS && !this.floors.has(line)) this.prune();
    this.floors.set(line, Math.max(until, this.floors.get(line) ?? 0));
  }

  /** How long this line must still wait (0: it may go). */
  waitFor(d: Delivery): number {
    const line = ReceiverFloors.line(d);
    const until = this.floors.get(line);
    if (until === undefined) return 0;
    const left = until - this.now();
    if (left <= 0) this.floors.delete(line);
    return Math.max(0, Math.ceil(left));
  }

  private prune(): void {
    const now = this.now();
    for (const [line, until] of this.floors) if (until <= now) this.floors.delete(line);
    // Still full: the oldest insertions go (a Map iterates in insertion order).
    for (const line of this.floors.keys()) {
      if (this.floors.size < MAX_FLOORS) break;
      this.floors.delete(line);
    }
  }
}

/** Holds a delivery whose line a receiver asked to wait, until the wait is over; what queues behind it folds into it then. */
export const floorStage = (floors: ReceiverFloors): GateStage => ({
  name: 'floor',
  async pass(g, ctx) {
    const wait = floors.waitFor(g.d);
    if (wait === 0) return g;
    await ctx.store.fold(g.d, wait);
    return null;
  },
});
