/**
 * Glossary (the words the rest of the code base uses):
 *
 * - key          the deterministic identity of one fault (`dedup:` + 32 hex for incidents),
 *                scoped by tenant. Same fault, same key, on every replica and after restarts.
 * - fingerprint  the material state of a fault (`severity|cleared`). A re-fire with the same
 *                fingerprint is noise; a different one is news.
 * - claim        the one atomic store step that makes a key live, or compares the fingerprint
 *                of a live one, and slides its TTL.
 * - decision     CREATE, SUPPRESS or UPDATE, always with a reason (see decision.ts).
 * - record       what the store keeps per live key: fingerprint, times, counters, expiry.
 * - outbox entry what must leave the building because of a decision, written in the same
 *                atomic step (arrives with delivery).
 * - delivery     one attempt sequence of an outbox entry to one adapter.
 * - dead letter  a delivery that will not succeed by retrying; kept, visible, replayable.
 */
export * from './clock.js';
export * from './identity.js';
export * from './fingerprint.js';
export * from './decision.js';
export * from './event.js';
export * from './violation.js';
export * from './outbox.js';
