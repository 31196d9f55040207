/**
 * Which layouts of a shared store (Redis keys, Postgres tables) a build can
 * read. Replicas of two releases serve one store during a rolling upgrade;
 * a change the previous release would misread (a field it would take for
 * something else, a key it would not look for) must instead stop that
 * release at start, loudly. So the store keeps the least generation a
 * replica needs to read what has been written to it: each replica raises it
 * to its own MIN_READER at start, and one whose GENERATION is below it
 * refuses to start. A change that only adds (what every change so far has
 * been) leaves both numbers as they are.
 */

/** The layout generation this build reads and writes. */
export const GENERATION = 1;

/** The oldest generation that reads correctly what this build writes; raised with a change older builds would misread. */
export const MIN_READER = 1;

/** Why this build must not serve a store that needs readers of `needed`, or null when it may. */
export function newerLayoutProblem(needed: number, store: string): string | null {
  if (!(needed > GENERATION)) return null;
  return `${store} has been written by a newer onceonly in a layout this one would misread (it needs layout generation ${needed}; this one reads ${GENERATION}): upgrade this replica, do not run it on this store`;
}
