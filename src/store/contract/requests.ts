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

export type RequestBegin =
  /** no live record: this call recorded the key in flight, and the caller runs the request */
  | { state: 'new' }
  /** another request with this key is running */
  | { state: 'in_flight'; bodyHash: string }
  /** answered before: replay it when the body is the same */
  | { state: 'done'; bodyHash: string; answer: StoredAnswer };

export interface RequestStore {
  /**
   * One atomic step: when (tenant, key) has no live record, records it in
   * flight for `leaseMs` with `bodyHash` and answers `new`; otherwise answers
   * the live record, unchanged.
   */
  begin(tenant: string, key: string, bodyHash: string, leaseMs: number): Promise<RequestBegin>;
  /** Records the answer of the request `begin` let run, kept `keepMs` from now. */
  finish(tenant: string, key: string, bodyHash: string, answer: StoredAnswer, keepMs: number): Promise<void>;
  /** Frees the key of a request that failed so that a retry should run it again; only while it is still in flight with `bodyHash`. */
  abandon(tenant: string, key: string, bodyHash: string): Promise<void>;
}
