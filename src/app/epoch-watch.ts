import { Counter, type Registry } from 'prom-client';
import type { Clock } from '../core/clock.js';
import type { Logger } from '../observe/logger.js';
import { type DedupStore, dataLost, type EpochMark } from '../store/contract/index.js';

/** How often a replica looks at the store's epoch marker. */
export const EPOCH_CHECK_MS = 5000;

/**
 * Watches the store's epoch marker (store/contract/epoch.ts) so that a store
 * that lost its data is never gone on from silently: the marker gone or
 * replaced, or its count gone backwards, counts
 * `onceonly_store_data_lost_total{store}`, logs one error naming what cannot
 * be recovered, and is shown on /readyz as `store_reset_at`. The tick itself
 * writes the new marker, so the next look compares with it.
 */
export class EpochWatch {
  private known: EpochMark | null = null;
  private timer: ReturnType<typeof setInterval> | null = null;
  private checking: Promise<void> | null = null;
  private readonly lost: Counter<'store'>;
  /** ms, when this replica last found the store's data lost; null: never */
  resetAt: number | null = null;

  constructor(
    private readonly store: Pick<DedupStore, 'kind' | 'tickEpoch'>,
    private readonly o: { registry: Registry; logger: Logger; clock: Clock },
  ) {
    this.lost = new Counter({
      name: 'onceonly_store_data_lost_total',
      help: "times this replica found the store's data lost: its epoch marker gone or replaced, or its count gone backwards (pending deliveries, live keys and silences written before cannot be recovered)",
      labelNames: ['store'],
      registers: [o.registry],
    });
    this.lost.labels(store.kind).inc(0);
  }

  /** One look; a store that does not answer now is looked at again next time (fail-open has its own probes). */
  check(): Promise<void> {
    this.checking ??= this.look().finally(() => (this.checking = null));
    return this.checking;
  }

  private async look(): Promise<void> {
    let now: EpochMark;
    try {
      now = await this.store.tickEpoch();
    } catch {
      return;
    }
    if (dataLost(this.known, now)) {
      this.lost.labels(this.store.kind).inc();
      this.resetAt = this.o.clock.now();
      const how = now.epoch !== this.known!.epoch ? 'its epoch marker is gone or replaced' : `its count went back from ${this.known!.seq} to ${now.seq}`;
      this.o.logger.error(
        { store: this.store.kind, was: this.known, now },
        `the ${this.store.kind} store lost its data (${how}: restarted without persistence, flushed, or restored from an older backup): ` +
          'deliveries that were pending, live keys and silences written before cannot be recovered; ' +
          'faults that fire again make new tickets, and any that do not are not delivered (see dead letters and the receivers)',
      );
    }
    this.known = now;
  }

  /** Looks now (awaited: the first look is this replica's baseline), then every `everyMs`. */
  async start(everyMs = EPOCH_CHECK_MS): Promise<void> {
    await this.check();
    this.timer = setInterval(() => void this.check(), everyMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.checking;
  }
}
