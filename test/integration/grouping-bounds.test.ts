import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startSink } from '../fakes/http-fake.js';
import { inProcessServer } from '../helpers/server.js';
import { caughtUp } from '../helpers/settle.js';
import { until } from '../helpers/wait.js';
import { groupKeyOf, MEMBERS_SENT } from '../../src/engine/groups.js';

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
    await until(
      async () => ((await s.store.deliveries.backlog()).held >= 1 ? true : null),
      10_000,
      () => 'the group create was not held',
    );
    s.clock.advance(31_000);
    await until(
      () => grouped().length > 0 || null,
      10_000,
      () => 'no group create',
    );
    await caughtUp(s);
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
