import { test } from 'node:test';
import assert from 'node:assert/strict';
import { manualClock } from '../../src/core/clock.js';
import { MemoryStore } from '../../src/store/memory/memory-store.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import type { DedupStore } from '../../src/store/contract/index.js';
import { tempDir } from '../helpers/tmp.js';

/**
 * A server with no adapter still writes each create and change to its
 * outbox (the decision's step does not know the config); fanning it out to
 * nobody must keep nothing: no delivery, and no count per key and action
 * (which would otherwise be kept 30 days for every key ever decided).
 */
const stores: Array<[string, (dir: string) => { store: DedupStore; counters: () => number }]> = [
  [
    'memory',
    () => {
      const store = new MemoryStore(manualClock());
      return { store, counters: () => (store.deliveries as unknown as { counters: Map<string, unknown> }).counters.size };
    },
  ],
  [
    'sqlite',
    (dir) => {
      const store = new SqliteStore(`${dir}/o.db`, manualClock());
      return { store, counters: () => (store.database.prepare('SELECT count(*) AS n FROM delivery_counters').get() as { n: number }).n };
    },
  ],
];

for (const [name, open] of stores)
  test(`${name}: an outbox fanned out to no adapter keeps nothing; an adapter added later counts from 1`, async () => {
    const dir = tempDir();
    const { store, counters } = open(dir.path);
    try {
      const outbox = { severity: 'MAJOR', summary: 's', data: { element_id: 'e' } };
      for (let i = 0; i < 50; i++) await store.incidents.decide({ tenant: 'default', key: `dedup:${i}`, fingerprint: 'MAJOR|0', ttlMs: 60_000, outbox });
      assert.equal(await store.deliveries.fanOut([], 1000), 50, 'every entry is taken');
      assert.equal(await store.deliveries.fanOut([], 1000), 0);
      assert.equal(counters(), 0);
      assert.deepEqual(await store.deliveries.leaseDue('w', 1000, 100), []);

      await store.incidents.decide({
        tenant: 'default',
        key: 'dedup:0',
        fingerprint: 'CRITICAL|0',
        ttlMs: 60_000,
        outbox: { ...outbox, severity: 'CRITICAL' },
      });
      assert.equal(await store.deliveries.fanOut(['hook'], 1000), 1);
      const [d, ...rest] = await store.deliveries.leaseDue('w', 1000, 100);
      assert.deepEqual([d?.adapter, d?.entry.action, d?.entry.key, d?.n, rest.length], ['hook', 'update', 'dedup:0', 1, 0]);
      assert.equal(counters(), 1);
    } finally {
      await store.close();
      dir.remove();
    }
  });
