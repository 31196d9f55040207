import { movedTarget } from './shard-migration.js';

/** How many moves one call follows: a migration is one, and one may start while another ends. */
const MAX_MOVES = 3;

/**
 * A facet whose calls follow a shard-count migration: a call that meets a
 * shard frozen for its count (OOMOVED, answered before the script read or
 * wrote anything) moves the store's layout to the new count and is made again,
 * so a running replica changes count on its first such answer, with no
 * restart and no error seen by its caller.
 */
export function followMoves<T extends object>(facet: T, moved: (to: number) => void): T {
  return new Proxy(facet, {
    get(target, prop, receiver) {
      const value: unknown = Reflect.get(target, prop, receiver);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        const call = (left: number): unknown => {
          const result: unknown = value.apply(target, args);
          if (!(result instanceof Promise)) return result;
          return result.catch((err: unknown) => {
            const to = movedTarget(err);
            if (to === null || left === 0) throw err;
            moved(to);
            return call(left - 1);
          });
        };
        return call(MAX_MOVES);
      };
    },
  });
}
