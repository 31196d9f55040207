import type { Clock } from '../core/clock.js';
import { extendRun, type HistoryAppend, type HistoryEvent, type HistoryLimits, type HistoryStore } from '../store/contract/index.js';

/**
 * Why events of a history were dropped: the store refused their batch, the
 * queue for a store that is away was full, or their tenant's histories held
 * `history.max_bytes_per_tenant` already.
 */
export type HistoryDropReason = 'store_refused' | 'queue_full' | 'tenant_bytes';

export interface RecorderOptions {
  store: Pick<HistoryStore, 'append'>;
  /** read at every flush, so a reload takes effect; null: history is off (config max_events: 0) */
  limits: () => HistoryLimits | null;
  clock: Clock;
  /** how long an event waits to be written with others (ms) */
  flushMs?: number;
  /** events waiting at most; past it a new one is lost (counted), so a store that is away costs bounded memory */
  maxWaiting?: number;
  /** events that start a write at once, without waiting for the timer (a busy process writes in batches of this) */
  batch?: number;
  /** events that could not be written: the store refused their batch, or too many waited (`queue_full`) */
  lost?: (events: number, reason: HistoryDropReason, err?: unknown) => void;
}

/**
 * Writes keys' histories beside the steps they record: an event is recorded
 * once its step has happened (a decision answered, a delivery settled), so a
 * history never says what did not happen. Events wait up to `flushMs` and go
 * in one store call, in the order they were recorded; a SUPPRESS run of one
 * key is folded here first, so 10,000 repeats cost the store a few writes.
 * A batch the store refuses is lost, not retried (a retry could write a run
 * twice): a history may miss a line while its store is away.
 */
export class HistoryRecorder {
  private waiting: HistoryAppend[] = [];
  /** each key's last waiting append, where a run may fold, by tenant then key (no joined string to hash per event) */
  private readonly tails = new Map<string, Map<string, HistoryAppend>>();
  private timer: NodeJS.Timeout | null = null;
  private writing: Promise<void> = Promise.resolve();
  /** a write is in progress */
  private busy = false;
  /** the flush that runs when the write in progress ends (one, whoever asked) */
  private next: Promise<void> | null = null;
  /** events handed to writes not yet finished: they count against maxWaiting too */
  private writingCount = 0;
  private readonly flushMs: number;
  private readonly maxWaiting: number;
  private readonly batch: number;

  constructor(private readonly o: RecorderOptions) {
    this.flushMs = o.flushMs ?? 50;
    this.maxWaiting = o.maxWaiting ?? 20_000;
    this.batch = o.batch ?? 500;
  }

  /** Whether events are kept at all now (config). */
  get on(): boolean {
    return this.o.limits() !== null;
  }

  /**
   * Records an event of a key, stamped now unless it carries its time. A
   * `fold` (a SUPPRESS of one fingerprint) counts into the key's last event
   * of the same fold instead of adding one. The event object is taken, not
   * copied: the caller does not touch it again.
   */
  record(tenant: string, key: string, event: Omit<HistoryEvent, 'at'> & { at?: number }, fold?: string): void {
    if (!this.on) return;
    const at = event.at ?? this.o.clock.now();
    let tails = this.tails.get(tenant);
    if (!tails) this.tails.set(tenant, (tails = new Map()));
    const tail = tails.get(key);
    if (fold !== undefined && tail?.fold === fold) {
      extendRun((tail.run ??= { count: 1, first_at: tail.event.at, last_at: tail.event.at, max_gap_ms: 0 }), at);
      return;
    }
    if (this.waiting.length + this.writingCount >= this.maxWaiting) {
      this.o.lost?.(1, 'queue_full');
      return;
    }
    // The caller's object is kept as it is (no copy): it is the recorder's from here on.
    if (event.at === undefined) event.at = at;
    const a: HistoryAppend = fold === undefined ? { tenant, key, event: event as HistoryEvent } : { tenant, key, event: event as HistoryEvent, fold };
    this.waiting.push(a);
    tails.set(key, a);
    // A full batch goes now: a process deciding without pause (no timer turn) still writes as it goes.
    if (this.waiting.length >= this.batch) {
      void this.flush();
      return;
    }
    this.timer ??= setTimeout(() => void this.flush(), this.flushMs);
    this.timer.unref?.();
  }

  /**
   * Writes what waits now, or once the write in progress ends; resolves once
   * it is in the store (or lost). One write at a time, so a key's later
   * events never land before its earlier ones. What is recorded while a write
   * is in progress waits (and keeps folding) and goes in one write when it
   * ends: a write queued per batch behind the one in progress would start
   * only after every step already queued (a process deciding at full speed
   * queues hundreds), each falling further behind until events were lost to
   * maxWaiting with the store healthy.
   */
  flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (this.busy) {
      this.next ??= this.writing.then(() => {
        this.next = null;
        return this.flush();
      });
      return this.next;
    }
    const batch = this.waiting;
    this.waiting = [];
    this.tails.clear();
    this.writingCount += batch.length;
    this.busy = true;
    this.writing = this.write(batch).finally(() => {
      this.writingCount -= batch.length;
      this.busy = false;
    });
    return this.writing;
  }

  /**
   * One store call per `batch` events at most, in turn (a store's call has
   * its own costs by size: Postgres takes an advisory lock per key in one
   * transaction). A part the store refuses is lost; the parts after it are
   * still written.
   */
  private async write(batch: HistoryAppend[]): Promise<void> {
    const limits = this.o.limits();
    if (!limits) return;
    for (let i = 0; i < batch.length; i += this.batch) {
      const part = batch.length <= this.batch ? batch : batch.slice(i, i + this.batch);
      try {
        const { overTenantBytes } = await this.o.store.append(part, limits);
        if (overTenantBytes > 0) this.o.lost?.(overTenantBytes, 'tenant_bytes');
      } catch (err) {
        this.o.lost?.(part.length, 'store_refused', err);
      }
    }
  }

  /** Writes what waits (shutdown). */
  close(): Promise<void> {
    return this.flush();
  }
}
