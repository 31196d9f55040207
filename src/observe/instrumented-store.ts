import type { Histogram } from 'prom-client';
import { type DedupStore, FACET_NAMES, type Facets } from '../store/contract/index.js';
import { wrapFacet } from '../store/facet.js';

/** One series of the store latency histogram, its labels bound. */
type Timed = ReturnType<Histogram<'operation' | 'outcome'>['labels']>;

/**
 * Times every store call the engine, the dashboard and metrics make, by
 * `facet.method` and outcome (a store round trip should stay under
 * 2 ms: watched here). Deliveries are timed by the worker, per adapter.
 */
export function instrumentStore(inner: DedupStore, latency: Histogram<'operation' | 'outcome'>): DedupStore {
  const timed = (facet: string) => {
    // Each method's series looked up once, not by hashing its labels on every call.
    const series = new Map<string, { ok: Timed; error: () => Timed }>();
    const of = (method: string) => {
      let s = series.get(method);
      if (!s) {
        const operation = `${facet}.${method}`;
        let error: Timed | null = null;
        s = { ok: latency.labels({ operation, outcome: 'ok' }), error: () => (error ??= latency.labels({ operation, outcome: 'error' })) };
        series.set(method, s);
      }
      return s;
    };
    return async (method: string, call: () => Promise<unknown>) => {
      const s = of(method);
      const start = performance.now();
      try {
        const r = await call();
        s.ok.observe((performance.now() - start) / 1000);
        return r;
      } catch (err) {
        s.error().observe((performance.now() - start) / 1000);
        throw err;
      }
    };
  };
  // Deliveries are timed by the worker, per adapter: the rest by this list.
  const facets = Object.fromEntries(
    FACET_NAMES.map((name) => [name, name === 'deliveries' ? inner.deliveries : wrapFacet(inner[name] as object, timed(name))]),
  ) as Facets;
  return {
    kind: inner.kind,
    ...facets,
    sweepExpired: () => inner.sweepExpired(),
    ping: () => inner.ping(),
    close: () => inner.close(),
    ...(inner.init ? { init: () => inner.init!() } : {}),
  };
}
