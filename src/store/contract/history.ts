/**
 * The history facet: what happened to a key, oldest first, for `GET
 * /v1/incidents/{key}/history`, `onceonly explain` and `onceonly simulate`.
 *
 * The store keeps events as the recorder gives them; it knows only how to
 * fold a run (an event whose `fold` equals the key's last event's is counted
 * into it instead of appended) and its bounds: at most `maxEvents` per key
 * (oldest dropped first) and each event `keepMs` after its last time. A
 * key's history outlives the key itself: it is not touched by a close, an
 * expiry or a sweep of the key.
 */

/** One event of a key's history. `at` is ms; every other field is the event's own (docs/history.md lists them). */
export interface HistoryEvent {
  at: number;
  type: string;
  [field: string]: unknown;
}

/** A folded run's bookkeeping, answered on the event it folded into. */
export interface HistoryRun {
  /** arrivals in the run */
  count: number;
  /** the run's first and last arrival (ms) */
  first_at: number;
  last_at: number;
  /** the longest time between two arrivals of the run (ms): what a replay with a shorter TTL needs */
  max_gap_ms: number;
}

export interface HistoryAppend {
  tenant: string;
  key: string;
  event: HistoryEvent;
  /**
   * Events with the same fold (a SUPPRESS of one fingerprint) are one run:
   * appended after the key's last event of the same fold, this counts into it.
   */
  fold?: string;
  /** this append already stands for a run (folded before it reached the store); absent: one arrival at `event.at` */
  run?: HistoryRun;
}

export interface HistoryLimits {
  /** events kept per key, the newest */
  maxEvents: number;
  /** how long an event is kept after its last time (ms) */
  keepMs: number;
  /**
   * Bytes a tenant's kept events may hold at once (their stored bodies,
   * UTF-8; on Redis each element with its run header), all its keys
   * together; absent: no bound. An event that would take its tenant past it
   * is not kept; a run folding into a kept event adds nothing. On Redis the
   * bound is kept per shard, each holding its share (the bound over the
   * shard count), since one script sees one shard.
   */
  maxTenantBytes?: number;
}

/** A key's history as the store answers it: its events, a folded run's with its `HistoryRun` fields. */
export type StoredHistoryEvent = HistoryEvent & Partial<HistoryRun>;

export interface HistoryStore {
  /**
   * Appends events, in order. Each key's appends are one atomic step (a
   * fold reads and writes the key's last event in it); a batch is one step
   * per transaction or per Redis shard.
   */
  append(entries: readonly HistoryAppend[], limits: HistoryLimits): Promise<AppendResult>;
  /** A key's events, oldest first (empty when none is kept). */
  read(tenant: string, key: string): Promise<StoredHistoryEvent[]>;
  /**
   * The keys with an event whose last time is at or after `since`, at most
   * `limit` of them, in no set order: what `onceonly simulate` replays. A
   * scan of every history, for that offline tool, never for a request.
   */
  keysSince(since: number, limit: number): Promise<HistoryKey[]>;
}

/** What an append could not keep: events past their tenant's byte bound (`HistoryLimits.maxTenantBytes`). */
export interface AppendResult {
  overTenantBytes: number;
}

/** The UTF-8 bytes of a stored body: what the tenant bound counts. */
export const bodyBytes = (body: string): number => Buffer.byteLength(body, 'utf8');

/** A key that has a history. */
export interface HistoryKey {
  tenant: string;
  key: string;
}

/** Keys folded per run in the store's own form: the run's counters stored beside the event body. */
export interface StoredRun {
  fold: string | null;
  count: number;
  first_at: number;
  last_at: number;
  gap: number;
}

/** Counts one more arrival at `at` into a run (the arrival after its last). */
export function extendRun(r: HistoryRun, at: number): void {
  r.max_gap_ms = Math.max(r.max_gap_ms, at - r.last_at);
  r.last_at = at;
  r.count++;
}

/** The run an append stands for. */
export const runOf = (a: HistoryAppend): HistoryRun => a.run ?? { count: 1, first_at: a.event.at, last_at: a.event.at, max_gap_ms: 0 };

/** An event's body as stored: everything but its time (kept in its own column, or the run's header). */
export const bodyOf = (e: HistoryEvent): string => {
  const { at: _at, ...rest } = e;
  return JSON.stringify(rest);
};

/** A stored event back: its body, its time, and a run's fields when it folded more than one arrival. */
export function eventOf(body: string, r: StoredRun): StoredHistoryEvent {
  const e = { at: r.first_at, ...(JSON.parse(body) as Omit<HistoryEvent, 'at'>) } as StoredHistoryEvent;
  if (r.fold !== null) Object.assign(e, { count: r.count, first_at: r.first_at, last_at: r.last_at, max_gap_ms: r.gap });
  return e;
}
