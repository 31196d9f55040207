import { describe, test, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { manualClock, type ManualClock } from '../../src/core/clock.js';
import type { StoreFixture } from './incident-store.contract.js';

let seq = 0;

/** Windowed claims (SPC violations) on every backend. */
export function windowStoreContract(backend: string, open: (clock: ManualClock) => StoreFixture | Promise<StoreFixture>) {
  describe(`DedupStore contract: window claims on ${backend}`, () => {
    let fx: StoreFixture;
    let key: string;
    beforeEach(async () => {
      fx = await open(manualClock());
      key = `w-${process.pid}-${Date.now()}-${++seq}`;
    });
    afterEach(async () => {
      await fx.store.close();
      await fx.cleanup();
    });

    test('the first claim wins, repeats do not, until the claim expires', async () => {
      const ttl = 5 * fx.unit;
      assert.equal(await fx.store.claimWindow('t', key, ttl), true);
      assert.equal(await fx.store.claimWindow('t', key, ttl), false);
      assert.equal(await fx.store.claimWindow('u', key, ttl), true, 'tenants are separate');
      await fx.advance(ttl + fx.unit);
      assert.equal(await fx.store.claimWindow('t', key, ttl), true);
    });

    test('100 concurrent claims of one key: exactly one wins', async () => {
      const r = await Promise.all(Array.from({ length: 100 }, () => fx.store.claimWindow('t', key, 60 * fx.unit)));
      assert.equal(r.filter(Boolean).length, 1);
    });
  });
}
