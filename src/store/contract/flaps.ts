/**
 * The flaps facet: a key's recent creates and closes, for flapping detection.
 * Recorded beside the decision (not inside its atomic step: a transition
 * lost to a crash between the two undercounts a flap by one) and read when a
 * delivery of the key is leased. Times are the caller's, as the deadline they
 * are compared with is.
 */
export interface Transition {
  /** ms */
  at: number;
  action: 'create' | 'close';
}

/** Transitions kept per key at most (the newest): more than any useful `max_transitions`. */
export const MAX_TRANSITIONS_KEPT = 64;

export interface FlapStore {
  /**
   * One atomic step: appends a key's create or close at `at` and forgets its
   * transitions older than `at - keepMs` (and beyond the newest
   * MAX_TRANSITIONS_KEPT); the key's record lives `keepMs` after its last transition.
   */
  record(tenant: string, key: string, action: Transition['action'], at: number, keepMs: number): Promise<void>;
  /** The key's transitions at or after `since`, oldest first. */
  history(tenant: string, key: string, since: number): Promise<Transition[]>;
}
