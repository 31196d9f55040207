import { afterEach, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { manualClock, type ManualClock } from '../../src/core/clock.js';
import type { StoreFixture } from './incident-store.contract.js';

let seq = 0;

/** Inhibitors on every backend: recorded for a lifetime, found by rule and values, removed by source, tenants apart. */
export function inhibitorStoreContract(backend: string, open: (clock: ManualClock) => StoreFixture | Promise<StoreFixture>) {
  describe(`DedupStore contract: inhibitors on ${backend}`, () => {
    let fx: StoreFixture;
    let tenant: string;
    beforeEach(async () => {
      fx = await open(manualClock());
      tenant = `inh-${process.pid}-${Date.now()}-${++seq}`;
    });
    afterEach(async () => {
      await fx.store.close();
      await fx.cleanup();
    });

    test('a source is found under its rule and values only, until removed', async () => {
      const i = fx.store.inhibitors;
      await i.put(tenant, 'r1', '["cut-7"]', 'dedup:a', 60 * fx.unit);
      await i.put(tenant, 'r1', '["cut-7"]', 'dedup:b', 60 * fx.unit);
      await i.put(tenant, 'r1', '["cut-8"]', 'dedup:c', 60 * fx.unit);
      await i.put(tenant, 'r2', '["cut-7"]', 'dedup:a', 60 * fx.unit);
      assert.deepEqual((await i.find(tenant, 'r1', '["cut-7"]')).sort(), ['dedup:a', 'dedup:b']);
      assert.deepEqual(await i.find(tenant, 'r1', '["cut-9"]'), []);
      assert.deepEqual(await i.find(`${tenant}-other`, 'r1', '["cut-7"]'), [], 'another tenant sees none');
      await i.remove(tenant, 'dedup:a');
      assert.deepEqual(await i.find(tenant, 'r1', '["cut-7"]'), ['dedup:b'], 'removed under every rule');
      assert.deepEqual(await i.find(tenant, 'r2', '["cut-7"]'), []);
      assert.deepEqual(await i.find(tenant, 'r1', '["cut-8"]'), ['dedup:c'], 'the others stay');
    });

    test('a record lives its lifetime; a put extends it', async () => {
      const i = fx.store.inhibitors;
      await i.put(tenant, 'r1', '[]', 'dedup:a', 5 * fx.unit);
      await fx.advance(3 * fx.unit);
      await i.put(tenant, 'r1', '[]', 'dedup:a', 5 * fx.unit);
      await fx.advance(3 * fx.unit);
      assert.deepEqual(await i.find(tenant, 'r1', '[]'), ['dedup:a'], 'extended by the second put');
      await fx.advance(3 * fx.unit);
      assert.deepEqual(await i.find(tenant, 'r1', '[]'), [], 'expired');
    });
  });
}
