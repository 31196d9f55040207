import { afterEach, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { manualClock, type ManualClock } from '../../src/core/clock.js';
import { basisOf } from '../../src/store/contract/index.js';
import type { StoreFixture } from './incident-store.contract.js';

let seq = 0;

/** Heartbeats' last pings and claimed misses, on every backend. */
export function heartbeatStoreContract(backend: string, open: (clock: ManualClock) => StoreFixture | Promise<StoreFixture>) {
  describe(`DedupStore contract: heartbeats on ${backend}`, () => {
    let fx: StoreFixture;
    let tenant: string;
    /** The caller's clock: the heartbeat facet records the times it is given. */
    const now = () => fx.clock?.now() ?? Date.now();
    beforeEach(async () => {
      fx = await open(manualClock());
      tenant = `hb-${process.pid}-${Date.now()}-${++seq}`;
    });
    afterEach(async () => {
      await fx.store.close();
      await fx.cleanup();
    });

    test('enroll watches from now and keeps the first time; a ping moves the basis and keeps since', async () => {
      const h = fx.store.heartbeats;
      assert.deepEqual(await h.list(tenant), []);
      const t0 = now();
      await h.enroll(tenant, 'backup', t0);
      const [first] = await h.list(tenant);
      assert.equal(first!.name, 'backup');
      assert.equal(first!.lastPingAt, null);
      assert.equal(first!.missedBasis, null);
      assert.equal(first!.since, t0, 'the time it was given');
      await fx.advance(2 * fx.unit);
      await h.enroll(tenant, 'backup', now());
      assert.equal((await h.list(tenant))[0]!.since, first!.since, 'a second enroll changes nothing');
      const pinged = await h.ping(tenant, 'backup', now());
      assert.equal(pinged.since, first!.since);
      assert.ok(pinged.lastPingAt! > first!.since, 'the ping is later than the enrolment');
      assert.deepEqual(await h.list(tenant), [pinged]);
    });

    test('a ping of a heartbeat never watched starts watching it; tenants are separate; the list is by name', async () => {
      const h = fx.store.heartbeats;
      const r = await h.ping(tenant, 'zeta', now());
      assert.equal(r.lastPingAt, r.since);
      await h.enroll(tenant, 'alpha', now());
      await h.enroll(`${tenant}-other`, 'alpha', now());
      assert.deepEqual(
        (await h.list(tenant)).map((x) => x.name),
        ['alpha', 'zeta'],
      );
      assert.deepEqual(
        (await h.list(`${tenant}-other`)).map((x) => x.name),
        ['alpha'],
      );
    });

    test('a miss is claimed once per basis; a ping in between refuses the stale claim; clear only clears its own', async () => {
      const h = fx.store.heartbeats;
      await h.enroll(tenant, 'backup', now());
      const basis = basisOf((await h.list(tenant))[0]!);
      assert.equal(await h.claimMiss(tenant, 'backup', basis + 1), false, 'not its basis');
      assert.equal(await h.claimMiss(tenant, 'unknown', basis), false, 'not watched');
      assert.equal(await h.claimMiss(tenant, 'backup', basis), true);
      assert.equal(await h.claimMiss(tenant, 'backup', basis), false, 'claimed already');
      assert.equal((await h.list(tenant))[0]!.missedBasis, basis);
      await fx.advance(2 * fx.unit);
      const pinged = await h.ping(tenant, 'backup', now());
      assert.equal(pinged.missedBasis, basis, 'the ping answers the claimed miss it must close');
      assert.equal(await h.claimMiss(tenant, 'backup', basis), false, 'the basis moved');
      await h.clearMiss(tenant, 'backup', basis + 1);
      assert.equal((await h.list(tenant))[0]!.missedBasis, basis, 'another basis clears nothing');
      await h.clearMiss(tenant, 'backup', basis);
      assert.equal((await h.list(tenant))[0]!.missedBasis, null);
      assert.equal(await h.claimMiss(tenant, 'backup', pinged.lastPingAt!), true, 'the next miss can be claimed');
    });

    test('20 concurrent claims of one miss: exactly one wins', async () => {
      const h = fx.store.heartbeats;
      await h.enroll(tenant, 'backup', now());
      const basis = basisOf((await h.list(tenant))[0]!);
      const wins = await Promise.all(Array.from({ length: 20 }, () => h.claimMiss(tenant, 'backup', basis)));
      assert.equal(wins.filter(Boolean).length, 1);
    });
  });
}
