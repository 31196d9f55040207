import { afterEach, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { manualClock, type ManualClock } from '../../src/core/clock.js';
import { SILENCE_RETENTION_MS, type Silence } from '../../src/store/contract/index.js';
import type { StoreFixture } from './incident-store.contract.js';

let seq = 0;
const H = 3_600_000;

/** Silences on every backend: writes bump the version, tenants are apart, the open limit holds under a race. */
export function silenceStoreContract(
  backend: string,
  open: (clock: ManualClock) => StoreFixture | Promise<StoreFixture>,
  /** false on Redis: it deletes an ended silence itself, on its own clock (redis.test.ts checks that expiry instead) */
  sweepsOnClock = true,
) {
  describe(`DedupStore contract: silences on ${backend}`, () => {
    let fx: StoreFixture;
    let tenant: string;
    // Silence times are the caller's (the API's clock), so they are written out here, not read from the store.
    const t0 = Date.now();
    const silence = (over: Partial<Silence> = {}): Silence => ({
      id: randomUUID(),
      tenant,
      matchers: [{ name: 'fault_class', value: 'LOS', isRegex: false, isEqual: true }],
      startsAt: t0,
      endsAt: t0 + 2 * H,
      createdBy: 'ops ✓',
      comment: 'planned work on "ring 4"',
      updatedAt: t0,
      ...over,
    });
    beforeEach(async () => {
      fx = await open(manualClock(t0));
      tenant = `sil-${process.pid}-${t0}-${++seq}`;
    });
    afterEach(async () => {
      await fx.store.close();
      await fx.cleanup();
    });

    test('create, get, list and update round-trip a silence; each write moves the version', async () => {
      const s = fx.store.silences;
      const v0 = await s.version();
      const a = silence({ matchers: [{ name: 'severity', value: 'MAJOR|MINOR', isRegex: true, isEqual: false }] });
      assert.equal(await s.create(a, { open: 10, ended: 1000 }, t0), true);
      const v1 = await s.version();
      assert.notEqual(v1, v0, 'a create moves the version');
      assert.deepEqual(await s.get(tenant, a.id), a);
      const b = silence({ startsAt: t0 + H, endsAt: t0 + 3 * H });
      assert.equal(await s.create(b, { open: 10, ended: 1000 }, t0), true);
      assert.deepEqual(
        (await s.list(tenant)).map((x) => x.id),
        [a.id, b.id],
        'listed by start',
      );
      const changed = { ...a, comment: 'longer', endsAt: t0 + 5 * H, updatedAt: t0 + 1 };
      assert.equal(await s.update(changed, t0 + 1), 'updated');
      assert.deepEqual(await s.get(tenant, a.id), changed);
      assert.notEqual(await s.version(), v1, 'an update moves the version');
      assert.equal(await s.update(silence(), t0), 'absent', 'an unknown id is not created by an update');
      assert.equal(await s.get(tenant, 'nope'), null);
    });

    test('expire ends a silence now, keeps it listed, and an ended silence cannot be updated', async () => {
      const s = fx.store.silences;
      const a = silence();
      const pending = silence({ startsAt: t0 + H, endsAt: t0 + 2 * H });
      await s.create(a, { open: 10, ended: 1000 }, t0);
      await s.create(pending, { open: 10, ended: 1000 }, t0);
      const v = await s.version();
      assert.equal(await s.expire(tenant, a.id, t0 + 1000), true);
      assert.notEqual(await s.version(), v);
      const ended = await s.get(tenant, a.id);
      assert.equal(ended?.endsAt, t0 + 1000);
      assert.equal(ended?.startsAt, t0, 'an active silence keeps its start');
      assert.equal(await s.expire(tenant, pending.id, t0 + 2000), true);
      const p = await s.get(tenant, pending.id);
      assert.deepEqual([p?.startsAt, p?.endsAt], [t0 + 2000, t0 + 2000], 'a pending one ends before it starts');
      assert.equal(await s.expire(tenant, a.id, t0 + 5000), true, 'expiring again is no error');
      assert.equal((await s.get(tenant, a.id))?.endsAt, t0 + 1000, 'and changes nothing');
      assert.equal(await s.update({ ...a, comment: 'x' }, t0 + 5000), 'expired');
      assert.equal(await s.expire(tenant, 'no-such-id', t0), false);
      assert.equal((await s.list(tenant)).length, 2, 'ended silences stay listed');
      const later = silence({ startsAt: t0 + H, endsAt: t0 + 4 * H });
      await s.create(later, { open: 10, ended: 1000 }, t0);
      const notEnded = async (after: number) => (await s.list(null, after)).filter((x) => x.tenant === tenant).map((x) => x.id);
      // Ends: a at t0 + 1 s, pending at t0 + 2 s, later at t0 + 4 h; listed by start.
      assert.deepEqual(await notEnded(t0 + 1000), [pending.id, later.id], 'a reload lists only what ends after the time it gives');
      assert.deepEqual(await notEnded(t0 + 999), [a.id, pending.id, later.id], 'one ending a moment after it is listed');
      assert.deepEqual(await notEnded(t0 + 4 * H), [], 'one ending at it is not');
    });

    test('changedSince: the version now and exactly the silences written after a version, expiries included', async () => {
      const s = fx.store.silences;
      const mine = (xs: Silence[]) => xs.filter((x) => x.tenant === tenant);
      const a = silence();
      const b = silence({ startsAt: t0 + H, endsAt: t0 + 3 * H });
      await s.create(a, { open: 10, ended: 1000 }, t0);
      const v1 = await s.version();
      const none = await s.changedSince(v1);
      assert.deepEqual([none.version, mine(none.silences)], [v1, []], 'nothing written since');
      await s.create(b, { open: 10, ended: 1000 }, t0);
      const after = await s.changedSince(v1);
      assert.equal(after.version, await s.version());
      assert.deepEqual(mine(after.silences), [b], 'only the silence written since, as stored');
      const v2 = after.version;
      assert.equal(await s.expire(tenant, a.id, t0 + 1000), true);
      assert.deepEqual(
        mine((await s.changedSince(v2)).silences).map((x) => [x.id, x.endsAt]),
        [[a.id, t0 + 1000]],
        'an expiry is a change: a replica learns the silence ended',
      );
      assert.equal(await s.update({ ...b, comment: 'moved', updatedAt: t0 + 2 }, t0 + 2), 'updated');
      assert.deepEqual(
        mine((await s.changedSince(v2)).silences)
          .map((x) => x.id)
          .sort(),
        [a.id, b.id].sort(),
        'both written since v2',
      );
      assert.deepEqual(
        mine((await s.changedSince(0)).silences)
          .map((x) => x.id)
          .sort(),
        [a.id, b.id].sort(),
        'from 0: every silence kept',
      );
    });

    test('tenants are apart: one cannot see, update or expire another’s silence; list(null) sees all', async () => {
      const s = fx.store.silences;
      const a = silence();
      await s.create(a, { open: 10, ended: 1000 }, t0);
      const other = `${tenant}-other`;
      assert.equal(await s.get(other, a.id), null);
      assert.deepEqual(await s.list(other), []);
      assert.equal(await s.update({ ...a, tenant: other }, t0), 'absent');
      assert.equal(await s.expire(other, a.id, t0), false);
      assert.equal((await s.get(tenant, a.id))?.endsAt, a.endsAt, 'untouched');
      const b = silence({ tenant: other });
      await s.create(b, { open: 10, ended: 1000 }, t0);
      const all = (await s.list(null)).map((x) => x.id);
      assert.ok(all.includes(a.id) && all.includes(b.id));
    });

    test('at most maxOpen open silences per tenant, also when 20 creates race; ended ones do not count', async () => {
      const s = fx.store.silences;
      const made = await Promise.all(Array.from({ length: 20 }, () => s.create(silence(), { open: 5, ended: 1000 }, t0)));
      assert.equal(made.filter(Boolean).length, 5);
      assert.equal(await s.create(silence(), { open: 5, ended: 1000 }, t0), false);
      const [first] = await s.list(tenant);
      await s.expire(tenant, first!.id, t0 + 1);
      assert.equal(await s.create(silence(), { open: 5, ended: 1000 }, t0 + 2), true, 'an expired one frees its place');
      assert.equal(await s.create(silence({ tenant: `${tenant}-b` }), { open: 5, ended: 1000 }, t0 + 2), true, 'another tenant has its own count');
    });

    test("a tenant keeps at most its bound of ended silences: a create deletes its oldest-ended beyond that, not another tenant's", async () => {
      const s = fx.store.silences;
      // The bound as configured (limits.ended_silences_per_tenant); small, so the trim runs on every create below.
      const KEEP = 40;
      const other = `${tenant}-other`;
      // Ended ones (ends in the past of `now`), oldest-ended first, as a create-and-expire loop leaves them.
      const ended = (i: number, t = tenant) => silence({ tenant: t, startsAt: t0 - 10 * H, endsAt: t0 - 5 * H + i * 1000, comment: `ended ${i}` });
      const now = t0;
      const made: string[] = [];
      // Stored while they were open (the write happens before their end), as they would have been.
      for (let i = 0; i < KEEP + 5; i++) {
        const x = ended(i);
        assert.equal(await s.create(x, { open: KEEP + 10, ended: KEEP }, x.endsAt - 1), true);
        made.push(x.id);
      }
      assert.equal(await s.create(ended(0, other), { open: 5, ended: KEEP }, t0 - 6 * H), true);
      assert.equal(await s.create(silence(), { open: 5, ended: KEEP }, now), true, 'an open one is created');
      const kept = await s.list(tenant);
      const endedKept = kept.filter((x) => x.endsAt <= now);
      assert.equal(endedKept.length, KEEP, 'the ended ones are trimmed to the bound');
      assert.equal(kept.length, KEEP + 1, 'and the new open one is there');
      const ids = new Set(kept.map((x) => x.id));
      assert.ok(
        made.slice(0, 5).every((id) => !ids.has(id)),
        'the five oldest-ended went',
      );
      assert.ok(
        made.slice(5).every((id) => ids.has(id)),
        'the newest-ended stayed',
      );
      assert.equal((await s.list(other)).length, 1, "another tenant's ended silence is untouched");
    });

    test('an ended silence is swept after the retention, not before', {
      skip: !sweepsOnClock && 'Redis deletes ended silences itself (PXAT), checked in redis.test.ts',
    }, async () => {
      assert.ok(fx.clock, 'a store swept on the clock runs on the test clock');
      const s = fx.store.silences;
      const a = silence({ endsAt: t0 + H });
      await s.create(a, { open: 10, ended: 1000 }, t0);
      fx.clock.set(t0 + H + SILENCE_RETENTION_MS - 1);
      await fx.store.sweepExpired();
      assert.ok(await s.get(tenant, a.id), 'kept until the retention has passed');
      const v = await s.version();
      fx.clock.set(t0 + H + SILENCE_RETENTION_MS);
      assert.ok((await fx.store.sweepExpired()) >= 1);
      assert.equal(await s.get(tenant, a.id), null);
      assert.notEqual(await s.version(), v, 'a sweep that removed silences moves the version');
    });
  });
}
