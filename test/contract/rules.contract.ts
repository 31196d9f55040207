import { afterEach, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { manualClock, type ManualClock } from '../../src/core/clock.js';
import { COUNTER_MEMORY_MS, SWEEP_BATCH, type Delivery } from '../../src/store/contract/index.js';
import type { StoreFixture } from './incident-store.contract.js';

/**
 * The lifetimes and batch sizes named in the facet contracts, kept by every
 * backend that runs on an injected clock (memory, SQLite, Postgres). Redis
 * keeps them as PX expiries on its own clock: its file checks the TTLs the
 * scripts set against the same constants.
 */
export function rulesContract(backend: string, open: (clock: ManualClock) => StoreFixture | Promise<StoreFixture>) {
  describe(`store rules on ${backend}`, () => {
    let fx: StoreFixture;
    let clock: ManualClock;
    const payload = { severity: 'MAJOR', summary: 's', data: {} };
    const deliverAll = async (): Promise<Delivery[]> => {
      while ((await fx.store.deliveries.fanOut(['hook'], 1000)) > 0);
      const got = await fx.store.deliveries.leaseDue('w', 60_000, 1000);
      for (const d of got) await fx.store.deliveries.settle(d, { outcome: 'delivered' });
      return got;
    };
    /** The n of the next create of `key`, after that key was created and closed once already. */
    const nextCreateN = async (key: string) => {
      await fx.store.incidents.decide({ tenant: 't', key, fingerprint: 'MAJOR|0', ttlMs: 60_000, outbox: payload });
      const [d] = (await deliverAll()).filter((x) => x.entry.key === key && x.entry.action === 'create');
      await fx.store.incidents.close('t', key);
      await deliverAll();
      return d!.n;
    };

    beforeEach(async () => {
      clock = manualClock();
      fx = await open(clock);
    });
    afterEach(async () => {
      await fx.store.close();
      await fx.cleanup();
    });

    test('Idempotency-Key counters live COUNTER_MEMORY_MS after their last use, then the sweep forgets them', async () => {
      assert.equal(await nextCreateN('k'), 1);
      clock.advance(COUNTER_MEMORY_MS - 1000);
      await fx.store.sweepExpired();
      assert.equal(await nextCreateN('k'), 2, 'used inside its lifetime: kept, and the use renews it');
      clock.advance(COUNTER_MEMORY_MS - 1000);
      await fx.store.sweepExpired();
      assert.equal(await nextCreateN('k'), 3, 'renewed by the last use');
      clock.advance(COUNTER_MEMORY_MS + 1000);
      while ((await fx.store.sweepExpired()) > 0);
      assert.equal(await nextCreateN('k'), 1, 'unused for a whole lifetime: forgotten');
    });

    test('a sweep deletes at most SWEEP_BATCH rows of a kind per pass', async () => {
      const n = SWEEP_BATCH + 7;
      await Promise.all(Array.from({ length: n }, (_, i) => fx.store.windows.claim('t', `w${i}`, 1000)));
      clock.advance(2000);
      assert.equal(await fx.store.sweepExpired(), SWEEP_BATCH);
      assert.equal(await fx.store.sweepExpired(), 7);
      assert.equal(await fx.store.sweepExpired(), 0);
    });

    test('an acknowledgement marker goes with its incident: a new episode can be acknowledged again', async () => {
      await fx.store.incidents.decide({ tenant: 't', key: 'a', fingerprint: 'MAJOR|0', ttlMs: 60_000 });
      assert.equal(await fx.store.incidents.acknowledge('t', 'a'), 'acknowledged');
      assert.equal(await fx.store.incidents.acknowledge('t', 'a'), 'repeat');
      clock.advance(1);
      await fx.store.incidents.close('t', 'a');
      await fx.store.incidents.decide({ tenant: 't', key: 'a', fingerprint: 'MAJOR|0', ttlMs: 60_000 });
      assert.equal(await fx.store.incidents.acknowledge('t', 'a'), 'acknowledged');
    });
  });
}
