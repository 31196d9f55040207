import type { Histogram } from 'prom-client';
import type { DedupStore } from '../store/contract/index.js';
import { wrapFacet } from '../store/facet.js';

/**
 * Times every store call the engine, the dashboard and metrics make, by
 * `facet.method` and outcome (a store round trip should stay under
 * 2 ms: watched here). Deliveries are timed by the worker, per adapter.
 */
export function instrumentStore(inner: DedupStore, latency: Histogram<'operation' | 'outcome'>): DedupStore {
  const timed = (facet: string) => async (method: string, call: () => Promise<unknown>) => {
    const end = latency.startTimer({ operation: `${facet}.${method}` });
    try {
      const r = await call();
      end({ outcome: 'ok' });
      return r;
    } catch (err) {
      end({ outcome: 'error' });
      throw err;
    }
  };
  return {
    kind: inner.kind,
    incidents: wrapFacet(inner.incidents, timed('incidents')),
    devices: wrapFacet(inner.devices, timed('devices')),
    windows: wrapFacet(inner.windows, timed('windows')),
    queries: wrapFacet(inner.queries, timed('queries')),
    requests: wrapFacet(inner.requests, timed('requests')),
    deliveries: inner.deliveries,
    sweepExpired: () => inner.sweepExpired(),
    ping: () => inner.ping(),
    close: () => inner.close(),
    ...(inner.init ? { init: () => inner.init!() } : {}),
  };
}
