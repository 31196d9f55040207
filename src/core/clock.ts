/**
 * All time in onceonly comes through a Clock so that tests can move past a TTL
 * or a retention window without sleeping. Milliseconds since the Unix epoch.
 */
export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

/** A clock that only moves when told to: for tests and simulations. */
export interface ManualClock extends Clock {
  advance(ms: number): void;
  set(ms: number): void;
}

export function manualClock(startMs = Date.UTC(2026, 0, 1)): ManualClock {
  let t = startMs;
  return {
    now: () => t,
    advance(ms: number) {
      if (!Number.isFinite(ms) || ms < 0) throw new RangeError(`a clock only moves forward, got ${ms}`);
      t += ms;
    },
    set(ms: number) {
      t = ms;
    },
  };
}
