import { afterEach, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { manualClock, type ManualClock } from '../../src/core/clock.js';
import { MAX_TRANSITIONS_KEPT } from '../../src/store/contract/index.js';
import type { StoreFixture } from './incident-store.contract.js';

let seq = 0;

/** Each key's recent creates and closes, on every backend. */
export function flapStoreContract(backend: string, open: (clock: ManualClock) => StoreFixture | Promise<StoreFixture>) {
  describe(`DedupStore contract: flap history on ${backend}`, () => {
    let fx: StoreFixture;
    let key: string;
    beforeEach(async () => {
      fx = await open(manualClock());
      key = `dedup:flap-${process.pid}-${Date.now()}-${++seq}`;
    });
    afterEach(async () => {
      await fx.store.close();
      await fx.cleanup();
    });

    test('transitions come back oldest first, from `since`; keys and tenants are separate', async () => {
      const f = fx.store.flaps;
      const t0 = 1_800_000_000_000;
      assert.deepEqual(await f.history('acme', key, 0), []);
      await f.record('acme', key, 'create', t0, 600_000);
      await f.record('acme', key, 'close', t0 + 10, 600_000);
      await f.record('acme', key, 'create', t0 + 10, 600_000);
      await f.record('beta', key, 'create', t0 + 20, 600_000);
      await f.record('acme', `${key}x`, 'close', t0 + 30, 600_000);
      assert.deepEqual(await f.history('acme', key, 0), [
        { at: t0, action: 'create' },
        { at: t0 + 10, action: 'close' },
        { at: t0 + 10, action: 'create' },
      ]);
      assert.deepEqual(await f.history('acme', key, t0 + 10), [
        { at: t0 + 10, action: 'close' },
        { at: t0 + 10, action: 'create' },
      ]);
      assert.deepEqual(await f.history('beta', key, 0), [{ at: t0 + 20, action: 'create' }]);
    });

    test('a record forgets what is older than its window, and keeps the newest MAX_TRANSITIONS_KEPT', async () => {
      const f = fx.store.flaps;
      const t0 = 1_800_000_000_000;
      await f.record('acme', key, 'create', t0, 1000);
      await f.record('acme', key, 'close', t0 + 1500, 1000);
      assert.deepEqual(await f.history('acme', key, 0), [{ at: t0 + 1500, action: 'close' }], 'the create fell out of the window');
      for (let i = 0; i < MAX_TRANSITIONS_KEPT + 6; i++) await f.record('acme', key, i % 2 ? 'close' : 'create', t0 + 2000 + i, 60_000);
      const h = await f.history('acme', key, 0);
      assert.equal(h.length, MAX_TRANSITIONS_KEPT);
      assert.equal(h.at(-1)!.at, t0 + 2000 + MAX_TRANSITIONS_KEPT + 5, 'the newest are kept');
    });
  });
}
