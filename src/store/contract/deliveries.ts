import type { OutboxAction, OutboxEntry, OutboxKind } from '../../core/outbox.js';

/**
 * Delivery state, kept in the same store as the decisions (so a replica that
 * dies mid-delivery leaves nothing behind that another cannot pick up).
 *
 * An outbox entry is fanned out into one Delivery per configured adapter. A
 * delivery is due at a time; leasing it pushes that time forward by the lease
 * and stamps a fencing token, so a worker that dies mid-call simply lets the
 * lease run out and another worker takes it. Only the holder of the current
 * token can settle it. Every step below is one atomic step in its backend.
 */

export interface Attempt {
  /** ms, store clock */
  at: number;
  error: string;
}

export interface Delivery {
  /** Opaque and stable; what `/v1/dead-letters/{id}/retry` takes. */
  id: string;
  adapter: string;
  entry: OutboxEntry;
  /** This (kind, tenant, key, action)'s count of entries: the `n` of `Idempotency-Key: key:action:n`. */
  n: number;
  /** Failures since it was (re)queued: the backoff exponent and the retry budget. */
  retries: number;
  /** Every failed attempt, oldest first (the most recent MAX_ATTEMPTS_KEPT). */
  attempts: Attempt[];
  status: 'pending' | 'dead';
  /** The fencing token of the lease this copy was handed out under. */
  lease: string;
  /** ms, when it was parked as a dead letter */
  deadAt?: number;
  /** held by a mute (a silence) and not yet released: its release folds what queued up behind it */
  held?: boolean;
  /** On a dead letter (deadLetters): how many later deliveries of its key to its adapter wait behind it. */
  waiting?: number;
}

export type Settlement =
  | { outcome: 'delivered' }
  /**
   * retry no sooner than delayMs from now (store clock). `floorMs`: the
   * receiver's Retry-After, a floor for every later send of this delivery:
   * a re-fire's re-queue makes it due no sooner than that either.
   */
  | { outcome: 'retry'; delayMs: number; error: string; floorMs?: number }
  | { outcome: 'dead'; error: string };

export interface DeliveryBacklog {
  /** deliveries not yet delivered and not dead */
  pending: number;
  dead: number;
  /** `at` of the oldest entry still waiting (outbox or pending delivery not held by a mute), null when none */
  oldestAt: number | null;
  /** pending deliveries held by a mute now (counted in `pending` too) */
  held: number;
}

/**
 * What `fold` did. Folding takes the younger pending deliveries of a key to
 * one adapter (they wait behind the head: one at a time, oldest first) into
 * the head, so that what goes out when a mute ends is the key's latest state,
 * once.
 */
export type FoldOutcome =
  /** the lease was lost; nothing changed */
  | { kind: 'lost' }
  /** held for the time given, carrying the latest state of what was behind it */
  | { kind: 'held'; folded: number }
  /** a create that never went out and the close behind it: both gone, with what was between; nothing is delivered */
  | { kind: 'dropped'; folded: number }
  /** a close was behind it (its create went out before): it and what was between are gone; the close is due now.
   * Also a held close with the key opened again behind it: it and what was between are gone; the last create or close is due now */
  | { kind: 'superseded'; folded: number }
  /** released: still leased, carrying the latest state; deliver it now */
  | { kind: 'ready'; delivery: Delivery; folded: number };

/**
 * The fold rules, on the actions of the head and of the younger deliveries
 * behind it (oldest first), shared by every backend (Redis has them again in
 * lua/fold-delivery.lua): how many of the younger go, whether the head goes,
 * and which younger one's payload the head takes.
 */
export function foldPlan(
  head: OutboxAction,
  younger: readonly OutboxAction[],
  /**
   * The head was tried before (a failed attempt is on it). A create tried
   * once may have reached the receiver though its answer did not (a
   * timeout): it is never dropped with the close behind it, or the
   * receiver's last word would be that create, a ticket open for a fault
   * the producer said had cleared.
   */
  tried = false,
): { outcome: 'dropped' | 'superseded' | 'folded'; drop: number; latest: number | null } {
  const close = younger.indexOf('close');
  if (head === 'close') {
    // Only flapping holds a close: the key opened (and maybe closed) again behind it. The receiver
    // still has the ticket open, so the close and what was between go, and the key's last create
    // or close comes due in its place.
    const last = Math.max(younger.lastIndexOf('create'), younger.lastIndexOf('close'));
    return last < 0 ? { outcome: 'folded', drop: 0, latest: null } : { outcome: 'superseded', drop: last, latest: null };
  }
  // A tried create keeps its place, carrying the state just before the close; what was between goes, the close stays behind it.
  if (close >= 0 && head === 'create' && tried) return { outcome: 'folded', drop: close, latest: close > 0 ? close - 1 : null };
  if (close >= 0) return head === 'create' ? { outcome: 'dropped', drop: close + 1, latest: null } : { outcome: 'superseded', drop: close, latest: null };
  return { outcome: 'folded', drop: younger.length, latest: younger.length > 0 ? younger.length - 1 : null };
}

/** A delivery row's attempts as the SQL stores keep them (JSON text): was it ever tried? */
export const triedRow = (attempts: string) => attempts !== '[]' && attempts !== '';

/** Failed attempts kept on a delivery: the most recent ones. */
export const MAX_ATTEMPTS_KEPT = 20;
/** Characters of one attempt's error kept. */
export const MAX_ERROR_CHARS = 500;
/**
 * How long a key's per-action counter (the `n` of `Idempotency-Key`) is kept
 * after its last use. A receiver remembers an Idempotency-Key for hours or
 * days, not months: after this the count may start again at 1.
 */
export const COUNTER_MEMORY_MS = 30 * 86_400_000;

export interface DeliveryStore {
  /**
   * Moves up to `limit` outbox entries (oldest first) into one pending delivery
   * per adapter, due now, each entry atomically; with no adapters the entries
   * are consumed and nothing is delivered. Returns how many entries moved.
   */
  fanOut(adapters: readonly string[], limit: number, near?: DeliveryNear): Promise<number>;
  /** Leases up to `limit` due pending deliveries for `leaseMs` under a fresh token. */
  leaseDue(owner: string, leaseMs: number, limit: number, near?: DeliveryNear): Promise<Delivery[]>;
  /**
   * One atomic step under d's lease: folds the younger pending deliveries of
   * d's key to d's adapter into d (foldPlan), then, with `holdMs`, holds d
   * that long on the store's clock (its lease given up, marked held, no retry
   * counted), or, with null, releases it (still leased, the caller delivers
   * it now).
   */
  fold(d: Delivery, holdMs: number | null): Promise<FoldOutcome>;
  /**
   * Keeps a leased delivery's lease `leaseMs` longer from now (store clock),
   * while its call runs; false (and nothing changes) when the lease was lost.
   * Short leases renewed this way let another replica take over a dead
   * replica's deliveries within seconds, whatever the adapters' timeouts.
   */
  renew(d: Delivery, leaseMs: number): Promise<boolean>;
  /** Settles a leased delivery; false (and nothing changes) when its lease was lost. */
  settle(d: Delivery, s: Settlement): Promise<boolean>;
  /**
   * Dead letters, oldest first, of one tenant or (null) all, each with how
   * many later deliveries of its key to its adapter wait behind it (`waiting`).
   * A dead letter keeps its place at the head of its key's line to its adapter:
   * nothing later of that key goes to that adapter until it is retried or
   * dropped, so a receiver never gets a key's changes out of order.
   */
  deadLetters(tenant: string | null, limit: number): Promise<Delivery[]>;
  /** Puts a dead letter back in the queue, due now, with a fresh retry budget, in its place; false when no such dead letter (for that tenant). */
  retryDeadLetter(tenant: string | null, id: string): Promise<boolean>;
  /** Deletes a dead letter for good; the next delivery of its key to its adapter is due now. False when no such dead letter (for that tenant). */
  dropDeadLetter(tenant: string | null, id: string): Promise<boolean>;
  backlog(): Promise<DeliveryBacklog>;
  /**
   * Deletes dead letters parked for longer than `retentionMs` (store clock),
   * at most SWEEP_BATCH per pass (per shard on Redis), as dropDeadLetter does;
   * returns how many went.
   */
  sweepDeadLetters(retentionMs: number): Promise<number>;
}

/**
 * The requeue predicate: a delivery has failed (and so a re-fire of its key
 * puts it back in the queue, due now, with a fresh budget) once it has a
 * failed attempt or is dead. Due now, or at its Retry-After floor when the
 * receiver's answer set one that has not passed: a receiver that asked for
 * ten seconds gets ten seconds, whatever the key does meanwhile.
 */
export const isFailing = (d: Pick<Delivery, 'retries' | 'status'>) => d.retries > 0 || d.status === 'dead';

/** The key re-fires of which re-queue failing deliveries: kind, tenant and key. */
export type DeliveryScope = { kind: OutboxKind; tenant: string; key: string };

/**
 * The keys a pass of fanOut and leaseDue looks near: those just decided,
 * when a decision woke the worker. A hint, not a filter: a backend that
 * keeps its deliveries in parts (Redis's shards, each a script of its own)
 * may look only in these keys' parts, and then answers what is due there;
 * one that looks everywhere at the same cost ignores it. The worker's idle
 * passes give none, so nothing waits on a hint.
 */
export type DeliveryNear = readonly DeliveryScope[];

/** Appends a failed attempt, keeping the most recent MAX_ATTEMPTS_KEPT. */
export function withAttempt(attempts: Attempt[], at: number, error: string): Attempt[] {
  return [...attempts, { at, error: error.slice(0, MAX_ERROR_CHARS) }].slice(-MAX_ATTEMPTS_KEPT);
}
