import type { FlappingConfig } from '../config/holds.js';
import type { Delivery, FlapStore, Transition } from '../store/contract/index.js';
import type { HoldSource, HoldVerdict } from './holds.js';

/** Times a key was closed and created again, in a history of its transitions (oldest first). */
export function reopens(history: readonly Transition[]): number {
  let n = 0;
  for (let i = 1; i < history.length; i++) if (history[i]!.action === 'create' && history[i - 1]!.action === 'close') n++;
  return n;
}

/**
 * Flapping: a key closed and created again more than `max_transitions` times
 * inside `window_seconds` has its creates and closes held until it has kept
 * one state for `quiet_seconds`; then the delivery at the head of its line
 * (folding has brought it to the key's last state) goes out once, marked
 * `"flapping": true`. Incidents only: their creates and closes are recorded
 * as they are decided (Deduplicator).
 */
export class Flapping implements HoldSource {
  constructor(
    private readonly config: () => FlappingConfig | undefined,
    private readonly flaps: Pick<FlapStore, 'history'>,
  ) {}

  async verdict(d: Delivery, now: number): Promise<HoldVerdict> {
    const c = this.config();
    if (!c || d.entry.kind !== 'incident' || (d.entry.action !== 'create' && d.entry.action !== 'close')) return null;
    const windowMs = c.window_seconds * 1000;
    // A history the store cannot give now counts as no flapping: a page too many, never one lost.
    const history = await this.flaps.history(d.entry.tenant, d.entry.key, now - windowMs).catch(() => null);
    if (!history || reopens(history) <= c.max_transitions) return null;
    const until = history.at(-1)!.at + c.quiet_seconds * 1000;
    return now < until ? { hold: { by: 'flapping', id: 'flapping', until } } : { mark: { flapping: true } };
  }
}

/** How long transitions are kept: the window, or the quiet time when that is longer. */
export const flapKeepMs = (c: FlappingConfig) => Math.max(c.window_seconds, c.quiet_seconds) * 1000;
