import { randomUUID } from 'node:crypto';

/**
 * The store's epoch marker: an id written once with its layout, and a count
 * every replica raises each time it looks. A replica remembers what it saw
 * last. The id gone or replaced (a Redis restarted without persistence, a
 * FLUSHALL, another database behind the same URL) or the count gone
 * backwards (a database restored from an older backup, a Redis reloaded from
 * an older snapshot) means the store lost what was written since: pending
 * deliveries, live keys, silences. That is never to be gone on from as if
 * nothing happened.
 */
export interface EpochMark {
  epoch: string;
  seq: number;
}

/** A new marker's id. */
export const newEpoch = (): string => randomUUID();

/** Whether the store lost data between `known` (what this replica saw last; null: nothing yet) and `now`. */
export function dataLost(known: EpochMark | null, now: EpochMark): boolean {
  return known !== null && (now.epoch !== known.epoch || now.seq <= known.seq);
}
