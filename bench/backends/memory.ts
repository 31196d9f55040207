import { systemClock } from '../../src/core/clock.js';
import { MemoryStore } from '../../src/store/memory/memory-store.js';
import { GRACE_MS, type Backend } from './backend.js';

/** The in-process store; the naive algorithm and the ceiling on a plain Map. */
export async function memoryBackend(): Promise<Backend> {
  const naiveMap = new Map<string, { fp: string; ts: number }>();
  const ceilMap = new Map<string, string>();
  return {
    name: 'memory',
    store: new MemoryStore(systemClock, GRACE_MS),
    inflight: 256,
    async naive({ key, fp }) {
      const ts = Date.now();
      const stored = naiveMap.get(key);
      naiveMap.set(key, { fp, ts });
      return stored === undefined ? 'CREATE' : stored.fp === fp ? 'SUPPRESS' : 'UPDATE';
    },
    ceiling: { label: 'Map.set per decision', run: async ({ key, fp }) => ceilMap.set(key, fp) },
    async close() {},
  };
}
