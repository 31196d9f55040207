import type { Histogram } from 'prom-client';
import { type DedupStore, FACET_NAMES, type Facets } from '../store/contract/index.js';
import { methodNames } from '../store/facet.js';

/** One series of the store latency histogram, its labels bound. */
type Timed = ReturnType<Histogram<'operation' | 'outcome'>['labels']>;

/**
 * One call in this many of each operation is timed. Timing every call cost
 * a histogram observation and two clock reads per store call (and, as it was
 * then written, an extra async hop): about 3% of a served decision on the memory store, for a figure
 * whose quantiles a sample gives as well.
 */
export const STORE_TIMING_SAMPLE = 8;

/**
 * Times the store calls the engine, the dashboard and metrics make, by
 * `facet.method` and outcome (a store round trip should stay under 2 ms:
 * watched here), one call in STORE_TIMING_SAMPLE of each operation, the
 * first included. Deliveries are timed by the worker, per adapter.
 */
export function instrumentStore(inner: DedupStore, latency: Histogram<'operation' | 'outcome'>): DedupStore {
  const timed = (facet: object, name: string): object => {
    const source = facet as Record<string, (...args: unknown[]) => Promise<unknown>>;
    const wrapped: Record<string, unknown> = {};
    for (const method of methodNames(facet)) {
      const fn = source[method]!;
      const operation = `${name}.${method}`;
      // The series looked up once, not by hashing its labels on every call.
      let ok: Timed | null = null;
      let error: Timed | null = null;
      let untilTimed = 0;
      const since = (start: number) => (performance.now() - start) / 1000;
      // The caller gets the store's own promise back, observed beside it: timing a call adds no
      // hop to it, so the calls of an operation settle for their callers in the order the store
      // settled them (a key's decisions reach its history in the order they were decided).
      const time = (args: unknown[]) => {
        const start = performance.now();
        let r: Promise<unknown>;
        try {
          r = fn.apply(facet, args);
        } catch (err) {
          (error ??= latency.labels({ operation, outcome: 'error' })).observe(since(start));
          throw err;
        }
        Promise.resolve(r).then(
          () => (ok ??= latency.labels({ operation, outcome: 'ok' })).observe(since(start)),
          () => (error ??= latency.labels({ operation, outcome: 'error' })).observe(since(start)),
        );
        return r;
      };
      wrapped[method] = (...args: unknown[]) => {
        if (untilTimed-- > 0) return fn.apply(facet, args);
        untilTimed = STORE_TIMING_SAMPLE - 1;
        return time(args);
      };
    }
    return wrapped;
  };
  // Deliveries are timed by the worker, per adapter: the rest by this list.
  const facets = Object.fromEntries(FACET_NAMES.map((name) => [name, name === 'deliveries' ? inner.deliveries : timed(inner[name] as object, name)])) as Facets;
  return {
    kind: inner.kind,
    ...facets,
    sweepExpired: () => inner.sweepExpired(),
    ping: () => inner.ping(),
    tickEpoch: () => inner.tickEpoch(),
    close: () => inner.close(),
    ...(inner.init ? { init: () => inner.init!() } : {}),
  };
}
