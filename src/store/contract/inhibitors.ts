/**
 * The inhibitors facet: which live incidents can inhibit others. When an
 * incident's labels match an inhibition rule's source, the engine records it
 * here under the rule and the values of the rule's `equal` labels, for as long
 * as the incident lives; a target with the same values is muted while one is
 * recorded and its incident is still live. Kept in the shared store, so every
 * replica agrees and a restart forgets nothing.
 */
export interface InhibitorStore {
  /** Records (or extends) `source` as an inhibitor under `rule` and `tuple`, for `ttlMs` from now. */
  put(tenant: string, rule: string, tuple: string, source: string, ttlMs: number): Promise<void>;
  /** The sources recorded under `rule` and `tuple` whose record has not expired, at most 16. */
  find(tenant: string, rule: string, tuple: string): Promise<string[]>;
  /** Forgets `source` under every rule (its incident closed). */
  remove(tenant: string, source: string): Promise<void>;
}

/** Sources `find` returns at most: enough to find a live one among stale ones. */
export const MAX_INHIBITORS_FOUND = 16;
