/**
 * The requests facet: a producer's `Idempotency-Key`, kept beside the
 * decisions, so a retried POST answers what its first try answered instead
 * of being decided again (a retried CREATE would answer SUPPRESS).
 */

/** How long a request's answer is kept for its Idempotency-Key. */
export const REQUEST_MEMORY_MS = 24 * 3_600_000;
/**
 * How long a request may stay in flight before its key is free again: the
 * replica that took it died before answering. Long enough for a 10,000-line
 * batch on a slow store.
 */
export const REQUEST_LEASE_MS = 120_000;

/** A request's answer as it was sent. */
export interface StoredAnswer {
  status: number;
  contentType: string;
  body: string;
}

/**
 * What a kept answer costs its tenant's bound: its body's UTF-8 bytes. A
 * tenant's records (in flight or answered, until they expire and are swept)
 * count against `limits.idempotency_keys_per_tenant`, their bodies against
 * `limits.idempotency_bytes_per_tenant`.
 */
export const answerBytes = (a: StoredAnswer) => Buffer.byteLength(a.body, 'utf8');

/**
 * An answer as it may be kept: whole, or (when it would pass the tenant's
 * byte bound) its status and digest only, which costs next to nothing.
 */
export interface KeptAnswer {
  whole: StoredAnswer;
  digest: StoredAnswer;
}

/** A tenant's kept Idempotency-Keys: how many records (expired ones until swept), and their answers' bytes. */
export interface RequestQuota {
  keys: number;
  bytes: number;
}

/**
 * The bound's rule for recording a key that has no live record, the same on
 * every store (Redis's scripts say it in Lua): `expired` is the key's expired
 * record still kept, whose place is taken over and whose bytes are freed;
 * without one, a new key is refused (null) when the tenant holds `maxKeys`.
 * Answers the change to the tenant's quota.
 */
export function beginQuota(q: RequestQuota, expired: { size: number } | undefined, maxKeys: number): RequestQuota | null {
  if (expired) return { keys: 0, bytes: -expired.size };
  return q.keys >= maxKeys ? null : { keys: 1, bytes: 0 };
}

/**
 * Which form of an answer is kept, and the change to the tenant's quota:
 * whole when the tenant's bytes stay within `maxBytes` with it, the key's
 * record (`held`, gone when swept or abandoned meanwhile) freeing its own.
 */
export function finishQuota(q: RequestQuota, held: { size: number } | undefined, answer: KeptAnswer, maxBytes: number) {
  const freed = held?.size ?? 0;
  const kept: 'whole' | 'digest' = q.bytes - freed + answerBytes(answer.whole) <= maxBytes ? 'whole' : 'digest';
  const size = answerBytes(answer[kept]);
  return { kept, size, delta: { keys: held ? 0 : 1, bytes: size - freed } };
}

export type RequestBegin =
  /** no live record: this call recorded the key in flight, and the caller runs the request */
  | { state: 'new' }
  /** no live record, and the tenant's records already hold `maxKeys` keys: nothing was recorded */
  | { state: 'full' }
  /** another request with this key is running */
  | { state: 'in_flight'; bodyHash: string }
  /** answered before: replay it when the body is the same */
  | { state: 'done'; bodyHash: string; answer: StoredAnswer };

export interface RequestStore {
  /**
   * One atomic step: when (tenant, key) has no live record, records it in
   * flight for `leaseMs` with `bodyHash` and answers `new`, unless the
   * tenant's records already hold `maxKeys` keys (`full`, nothing recorded);
   * otherwise answers the live record, unchanged.
   */
  begin(tenant: string, key: string, bodyHash: string, leaseMs: number, maxKeys: number): Promise<RequestBegin>;
  /**
   * Records the answer of the request `begin` let run, kept `keepMs` from
   * now: whole when the tenant's kept bytes stay within `maxBytes` with it,
   * otherwise its digest form. Answers which it kept.
   */
  finish(tenant: string, key: string, bodyHash: string, answer: KeptAnswer, keepMs: number, maxBytes: number): Promise<'whole' | 'digest'>;
  /** Frees the key of a request that failed so that a retry should run it again; only while it is still in flight with `bodyHash`. */
  abandon(tenant: string, key: string, bodyHash: string): Promise<void>;
}
