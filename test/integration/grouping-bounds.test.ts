import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startSink } from '../fakes/http-fake.js';
import { inProcessServer } from '../helpers/server.js';
import { caughtUp } from '../helpers/settle.js';
import { until } from '../helpers/wait.js';
import { groupKeyOf, MEMBERS_SENT } from '../../src/groups/groups.js';

type Server = Awaited<ReturnType<typeof inProcessServer>>;

/** The group's create, held for its 30 s wait, let out by the clock; resolves once it was delivered and the worker caught up. */
async function releaseCreate(s: Server, delivered: () => boolean) {
  await until(
    async () => ((await s.store.deliveries.backlog()).held >= 1 ? true : null),
    10_000,
    () => 'the group create was not held',
  );
  s.clock.advance(31_000);
  await until(
    () => delivered() || null,
    10_000,
    () => 'no group create',
  );
  await caughtUp(s);
}

/**
 * A group's delivery carries a bounded member list: its count, the first
 * MEMBERS_SENT members, and the member that changed. Each change used to
 * send every member, so a group of 1,000 made every update carry 1,000 keys.
 * GET /v1/groups/{key} lists them all.
 */
test(`a group of ${MEMBERS_SENT + 50} sends ${MEMBERS_SENT} members, their count and the change; the API lists all`, async () => {
  const hook = await startSink(200, {});
  const s = await inProcessServer({
    store: 'memory',
    config: `grouping: { by: [root_cause_id], wait_seconds: 30 }\nadapters:\n  - { name: tickets, type: webhook, url: "${hook.url}/groups", grouped: true }\n`,
  });
  try {
    const gk = groupKeyOf(['rc-big']);
    const n = MEMBERS_SENT + 50;
    for (let i = 0; i < n; i++) {
      const r = await s.post('/v1/incidents', { element_id: `olt-${i}`, fault_class: 'LOS', root_cause_id: 'rc-big', severity: 'MAJOR' });
      assert.equal(r.status, 200);
    }
    await until(
      async () => (await s.get(`/v1/groups/${gk}`)).body?.members?.length === n || null,
      20_000,
      () => 'the group never had all its members',
    );
    const grouped = () => hook.requests.filter((r) => r.path === '/groups' && r.body.key === gk);
    await releaseCreate(s, () => grouped().length > 0);
    const created = grouped()[0]!.body;
    assert.equal(created.action, 'create');
    assert.equal(created.data.members.length, MEMBERS_SENT);
    assert.deepEqual([created.data.member_count, created.data.members_truncated], [n, true]);
    assert.deepEqual(created.data.members, [...created.data.members].sort(), 'the first members, sorted');

    const more = await s.post('/v1/incidents', { element_id: 'olt-late', fault_class: 'LOS', root_cause_id: 'rc-big', severity: 'CRITICAL' });
    await until(
      () => grouped().some((r) => r.body.data.change?.member === more.body.dedup_key) || null,
      10_000,
      () => 'no update for the late member',
    );
    const update = grouped().find((r) => r.body.data.change?.member === more.body.dedup_key)!.body;
    assert.deepEqual(
      [update.action, update.severity, update.data.member_count, update.data.members.length, update.data.change.what],
      ['update', 'CRITICAL', n + 1, MEMBERS_SENT, 'joined'],
    );
    assert.ok(JSON.stringify(update).length < 16 * 1024, `an update of a ${n + 1}-member group stays small (${JSON.stringify(update).length} bytes)`);
    assert.equal((await s.get(`/v1/groups/${gk}`)).body.members.length, n + 1, 'the API lists every member');
  } finally {
    await s.stop();
    await hook.close();
  }
});

// Planted fault it catches: group updates sent one by one, however many queued behind a failing destination.
for (const store of ['memory', 'sqlite'] as const)
  test(`${store}: a group's updates that queue behind a failing destination go out as one, carrying the last change`, async () => {
    const hook = await startSink(200, {});
    const s = await inProcessServer({
      store,
      config: `grouping: { by: [root_cause_id], wait_seconds: 30 }\nadapters:\n  - { name: tickets, type: webhook, url: "${hook.url}/groups", grouped: true }\n`,
    });
    const member = (i: number) => ({ element_id: `ont-${i}`, fault_class: 'LOS', root_cause_id: 'rc-queue', severity: 'MAJOR' });
    try {
      const gk = groupKeyOf(['rc-queue']);
      const grouped = () => hook.requests.filter((r) => r.path === '/groups' && r.body.key === gk);
      assert.equal((await s.post('/v1/incidents', member(0))).status, 200);
      await releaseCreate(s, () => grouped().some((r) => r.body.action === 'create'));
      // The destination fails: the first update waits for its retry, and 40 more joins queue behind it.
      hook.faults = () => ({ status: 503 });
      const joins = 41;
      const joined = new Set<string>();
      for (let i = 1; i <= joins; i++) {
        const r = await s.post('/v1/incidents', member(i));
        assert.equal(r.status, 200);
        joined.add(r.body.dedup_key);
      }
      await until(
        async () => ((await s.get(`/v1/groups/${gk}`)).body?.members?.length === joins + 1 ? true : null),
        20_000,
        () => 'the group never had every member',
      );
      await caughtUp(s);
      const failedUpdates = grouped().filter((r) => r.body.action === 'update').length;
      assert.ok(failedUpdates >= 1, 'the first update was tried and refused');
      hook.faults = () => 'ok';
      s.clock.advance(60_000);
      await until(
        () => grouped().some((r) => r.body.action === 'update' && r.body.data.member_count === joins + 1) || null,
        10_000,
        () => 'no update with every member',
      );
      await caughtUp(s);
      const after = grouped()
        .filter((r) => r.body.action === 'update')
        .slice(failedUpdates);
      assert.equal(after.length, 1, `one update after the destination came back, not ${joins} (${after.length})`);
      // Members join their group in the order the applier takes them, not always the order posted.
      const { member_count, change } = after[0]!.body.data;
      assert.deepEqual([member_count, change.what, joined.has(change.member)], [joins + 1, 'joined', true], 'the update carries the whole group and a change');
      assert.equal((await s.store.deliveries.backlog()).pending, 0, 'nothing left queued');
    } finally {
      await s.stop();
      await hook.close();
    }
  });
