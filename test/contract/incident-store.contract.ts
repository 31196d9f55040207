import { describe, test, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { manualClock, type ManualClock } from '../../src/core/clock.js';
import { decideFromOutcome } from '../../src/core/decision.js';
import type { DedupStore, IncidentClaim } from '../../src/store/contract.js';

export interface StoreFixture {
  store: DedupStore;
  /** A second handle on the same data (another connection / process view), when the backend has one. */
  openPeer?: () => DedupStore;
  cleanup: () => Promise<void> | void;
}

const HOUR = 3_600_000;
const claim = (over: Partial<IncidentClaim> = {}): IncidentClaim => ({
  tenant: 'default',
  key: 'dedup:00000000000000000000000000000001',
  fingerprint: 'MAJOR|0',
  ttlMs: HOUR,
  ...over,
});

/**
 * The one contract every DedupStore backend must meet. Each backend's test
 * file calls this with a factory; backend-only cases live beside it.
 */
export function incidentStoreContract(backend: string, open: (clock: ManualClock) => StoreFixture | Promise<StoreFixture>) {
  describe(`DedupStore contract: incidents on ${backend}`, () => {
    let clock: ManualClock;
    let fx: StoreFixture;
    beforeEach(async () => {
      clock = manualClock();
      fx = await open(clock);
    });
    afterEach(async () => {
      await fx.store.close();
      await fx.cleanup();
    });

    const decide = async (c: Partial<IncidentClaim> = {}) => {
      const r = await fx.store.decideIncident(claim(c));
      return { ...decideFromOutcome(r.outcome, 0), record: r.record };
    };

    test('lifecycle: CREATE → SUPPRESS → UPDATE(severity) → SUPPRESS → UPDATE(cleared) → close → CREATE', async () => {
      assert.equal((await decide()).decision, 'CREATE');
      clock.advance(1000);
      assert.deepEqual((await decide()).decision, 'SUPPRESS');
      clock.advance(1000);
      const up = await decide({ fingerprint: 'CRITICAL|0' });
      assert.equal(up.decision, 'UPDATE');
      assert.equal(up.reason, 'severity');
      assert.equal((await decide({ fingerprint: 'CRITICAL|0' })).decision, 'SUPPRESS');
      const cl = await decide({ fingerprint: 'CRITICAL|1' });
      assert.equal(cl.reason, 'cleared');
      const rec = await fx.store.getIncident('default', claim().key);
      assert.ok(rec);
      assert.equal(rec.refires, 4);
      assert.equal(rec.updates, 2);
      assert.equal(rec.fingerprint, 'CRITICAL|1');
      assert.equal(rec.createdAt, clock.now() - 2000);
      assert.equal(await fx.store.closeIncident('default', claim().key), true);
      assert.equal(await fx.store.getIncident('default', claim().key), null);
      assert.equal(await fx.store.closeIncident('default', claim().key), false);
      const again = await decide();
      assert.equal(again.decision, 'CREATE');
      assert.equal(again.record.refires, 0);
    });

    test('the TTL slides with every arrival and expiry makes the next arrival a CREATE', async () => {
      await decide({ ttlMs: 10_000 });
      clock.advance(9_000);
      assert.equal((await decide({ ttlMs: 10_000 })).decision, 'SUPPRESS');
      clock.advance(9_000); // 18 s after the CREATE, 9 s after the last arrival: still live
      const live = await fx.store.getIncident('default', claim().key);
      assert.ok(live);
      assert.equal(live.expiresAt, clock.now() + 1_000);
      clock.advance(1_000); // exactly at expiry: expired
      assert.equal(await fx.store.getIncident('default', claim().key), null);
      assert.equal(await fx.store.countLiveIncidents(), 0);
      const re = await decide({ ttlMs: 10_000 });
      assert.equal(re.decision, 'CREATE');
      assert.equal(re.record.createdAt, clock.now());
    });

    test('closing an expired incident answers not live', async () => {
      await decide({ ttlMs: 1000 });
      clock.advance(1000);
      assert.equal(await fx.store.closeIncident('default', claim().key), false);
    });

    test('tenants are separate key spaces', async () => {
      assert.equal((await decide({ tenant: 'a' })).decision, 'CREATE');
      assert.equal((await decide({ tenant: 'b' })).decision, 'CREATE');
      assert.equal(await fx.store.closeIncident('a', claim().key), true);
      assert.ok(await fx.store.getIncident('b', claim().key));
      assert.equal(await fx.store.getIncident('a', claim().key), null);
    });

    test('live count and sweep', async () => {
      for (let i = 0; i < 5; i++) await decide({ key: `dedup:${String(i).padStart(32, '0')}`, ttlMs: 1000 + i * 1000 });
      assert.equal(await fx.store.countLiveIncidents(), 5);
      clock.advance(2500); // the first two expired
      assert.equal(await fx.store.countLiveIncidents(), 3);
      assert.equal(await fx.store.sweepExpired(), 2);
      assert.equal(await fx.store.sweepExpired(), 0);
      assert.equal(await fx.store.countLiveIncidents(), 3);
    });

    test('200 concurrent identical claims make exactly one CREATE', async () => {
      const results = await Promise.all(Array.from({ length: 200 }, () => decide()));
      assert.equal(results.filter((r) => r.decision === 'CREATE').length, 1);
      assert.equal(results.filter((r) => r.decision === 'SUPPRESS').length, 199);
      const rec = await fx.store.getIncident('default', claim().key);
      assert.equal(rec?.refires, 199);
    });

    test('40 concurrent copies of one severity change make exactly one UPDATE', async () => {
      await decide();
      const results = await Promise.all(Array.from({ length: 40 }, () => decide({ fingerprint: 'CRITICAL|0' })));
      assert.equal(results.filter((r) => r.decision === 'UPDATE').length, 1);
      assert.equal(results.filter((r) => r.decision === 'SUPPRESS').length, 39);
    });

    test('two handles on the same data race to exactly one CREATE', async (t) => {
      if (!fx.openPeer) return t.skip(`${backend} has no second handle on the same data`);
      const peer = fx.openPeer();
      try {
        const both = await Promise.all(
          Array.from({ length: 100 }, (_, i) => (i % 2 ? fx.store : peer).decideIncident(claim())),
        );
        assert.equal(both.filter((r) => r.outcome.kind === 'created').length, 1);
      } finally {
        await peer.close();
      }
    });
  });
}
