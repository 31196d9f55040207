import { afterEach, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { manualClock, type ManualClock } from '../../src/core/clock.js';
import type { GroupState, OutboxEntry } from '../../src/store/contract/index.js';
import type { StoreFixture } from './incident-store.contract.js';

let seq = 0;

/** Groups of incidents: a versioned record and its outbox entry in one step, on every backend. */
export function groupStoreContract(backend: string, open: (clock: ManualClock) => StoreFixture | Promise<StoreFixture>) {
  describe(`DedupStore contract: groups on ${backend}`, () => {
    let fx: StoreFixture;
    let gk: string;
    const tenant = 'acme';
    const state = (members: Record<string, string>): GroupState => ({
      tenant,
      groupKey: gk,
      by: { root_cause_id: 'rc-1' },
      members,
      createdAt: 1_800_000_000_000,
    });
    const entry = (action: 'create' | 'update' | 'close', n: number): OutboxEntry => ({
      tenant,
      kind: 'group',
      action,
      key: gk,
      severity: 'MAJOR',
      summary: `${n} incidents`,
      data: { members: Array.from({ length: n }, (_, i) => `dedup:${i}`) },
      at: 1_800_000_000_000,
    });
    /** The group entries the outbox holds for this group, oldest first (fanned out to one adapter and leased). */
    const written = async () => {
      await fx.store.deliveries.fanOut(['hook'], 10_000);
      const out: string[] = [];
      for (;;) {
        const got = (await fx.store.deliveries.leaseDue('w', 60_000, 1000)).filter((d) => d.entry.key === gk);
        if (got.length === 0) return out;
        for (const d of got) {
          out.push(`${d.entry.action}:${(d.entry.data.members as string[]).length}`);
          await fx.store.deliveries.settle(d, { outcome: 'delivered' });
        }
      }
    };
    beforeEach(async () => {
      fx = await open(manualClock());
      gk = `group:${String(process.pid).padStart(8, '0')}${String(Date.now() % 1e12).padStart(12, '0')}${String(++seq).padStart(12, '0')}`;
    });
    afterEach(async () => {
      await fx.store.close();
      await fx.cleanup();
    });

    test('commit writes the state and its entry only at the expected version; a stale commit changes nothing', async () => {
      const g = fx.store.groups;
      assert.equal(await g.get(tenant, gk), null);
      assert.equal(await g.commit(tenant, gk, 1, state({ 'dedup:a': 'MAJOR' }), entry('create', 1)), false, 'no group has version 1');
      assert.equal(await g.commit(tenant, gk, 0, state({ 'dedup:a': 'MAJOR' }), entry('create', 1)), true);
      assert.equal(await g.commit(tenant, gk, 0, state({ 'dedup:b': 'MINOR' }), entry('create', 1)), false, 'a second create of it loses');
      const one = await g.get(tenant, gk);
      assert.deepEqual([one?.version, one?.members, one?.by, one?.createdAt], [1, { 'dedup:a': 'MAJOR' }, { root_cause_id: 'rc-1' }, 1_800_000_000_000]);
      assert.equal(await g.commit(tenant, gk, 1, state({ 'dedup:a': 'MAJOR', 'dedup:b': 'CRITICAL' }), entry('update', 2)), true);
      assert.equal(await g.commit(tenant, gk, 1, state({}), entry('update', 0)), false, 'stale');
      assert.equal((await g.get(tenant, gk))?.version, 2);
      assert.equal(await g.commit(tenant, gk, 2, null, entry('close', 2)), true, 'the last member left');
      assert.equal(await g.get(tenant, gk), null);
      assert.equal(await g.get('beta', gk), null);
      assert.deepEqual(await written(), ['create:1', 'update:2', 'close:2'], 'one entry per commit that held, none for the refused');
    });

    test('a group keeps its route in its state, and its entries carry it to the outbox', async () => {
      const g = fx.store.groups;
      const routed = { ...state({ 'dedup:a': 'MAJOR' }), route: ['noc'] };
      assert.equal(await g.commit(tenant, gk, 0, routed, { ...entry('create', 1), route: ['noc'] }), true);
      assert.deepEqual((await g.get(tenant, gk))?.route, ['noc']);
      const mine = (await fx.store.queries.listOutbox()).filter((e) => e.key === gk);
      assert.deepEqual(
        mine.map((e) => [e.action, e.route]),
        [['create', ['noc']]],
      );
    });

    test('20 concurrent commits at one version: exactly one holds, and writes its one entry', async () => {
      const g = fx.store.groups;
      const wins = await Promise.all(Array.from({ length: 20 }, (_, i) => g.commit(tenant, gk, 0, state({ [`dedup:${i}`]: 'MAJOR' }), entry('create', 1))));
      assert.equal(wins.filter(Boolean).length, 1);
      assert.deepEqual(await written(), ['create:1']);
    });

    test('a member remembers its group until forgotten; list names the groups', async () => {
      const g = fx.store.groups;
      assert.equal(await g.memberOf(tenant, 'dedup:a'), null);
      await g.remember(tenant, 'dedup:a', gk);
      assert.equal(await g.memberOf(tenant, 'dedup:a'), gk);
      assert.equal(await g.memberOf('beta', 'dedup:a'), null);
      await g.remember(tenant, 'dedup:a', null);
      assert.equal(await g.memberOf(tenant, 'dedup:a'), null);
      await g.commit(tenant, gk, 0, state({ 'dedup:a': 'MAJOR' }), null);
      assert.ok((await g.list(10_000)).some((x) => x.tenant === tenant && x.groupKey === gk));
    });
  });
}
