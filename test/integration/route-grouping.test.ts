// needs: redis postgres
import { afterEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { FakeServer } from '../fakes/http-fake.js';
import { BACKENDS, backendWithSink } from '../helpers/backends.js';
import { inProcessServer, type InProcessServer } from '../helpers/server.js';
import { caughtUp } from '../helpers/settle.js';
import { until } from '../helpers/wait.js';
import { groupKeyOf } from '../../src/groups/groups.js';

const S = 1000;
// CRITICALs page as one group per root cause, with Alertmanager's route options; the rest go to the NOC
// one by one. The pager route takes CRITICAL alone (no continue): the NOC gets no CRITICAL on its own.
const config = (hook: FakeServer) => `
adapters:
  - { name: noc, type: webhook, url: "${hook.url}/noc" }
  - { name: pager, type: webhook, url: "${hook.url}/pager" }
route:
  receiver: noc
  routes:
    - receiver: pager
      matchers: ['severity="CRITICAL"']
      group_by: [root_cause_id]
      group_wait: 30s
      group_interval: 1m
      repeat_interval: 10m
`;
/** The pager route's group for a root cause: its place in the tree, then its `by` label and value. */
const groupOf = (rc: string) => groupKeyOf(['{}/{severity="CRITICAL"}/0', 'root_cause_id', rc]);
const incident = (element_id: string, root_cause_id: string, severity = 'CRITICAL') => ({ element_id, fault_class: 'LOS', root_cause_id, severity });

for (const backend of BACKENDS)
  describe(`route grouping on ${backend}`, () => {
    let hook: FakeServer;
    let server: InProcessServer | null = null;
    const stores = backendWithSink(backend, (h) => (hook = h));
    afterEach(async () => {
      await server?.stop();
      server = null;
      hook.requests.length = 0;
    });
    const at = (path: string) => hook.requests.filter((r) => r.path === path).map((r) => r.body);
    /** Waits until the group's next delivery is held by `by` (its history says so), so a clock move cannot race the hold. */
    const heldBy = (s: InProcessServer, gk: string, by: string, count: number) =>
      until(
        async () => {
          const events = ((await s.get(`/v1/incidents/${gk}/history`)).body?.events ?? []) as Array<Record<string, unknown>>;
          return events.filter((e) => e.type === 'held' && e.by === by).length >= count || null;
        },
        10_000,
        () => `no ${by} hold on ${gk}`,
      );

    test('a route with group_by pages one group: group_wait, then a change per group_interval tick, then repeat_interval', async () => {
      server = await inProcessServer({ store: await stores.fresh(), config: config(hook) });
      const s = server;
      const gk = groupOf('rc-1');
      for (const el of ['olt-1', 'olt-2', 'olt-3']) assert.equal((await s.post('/v1/incidents', incident(el, 'rc-1'))).body.decision, 'CREATE');
      const major = await s.post('/v1/incidents', incident('olt-9', 'rc-1', 'MAJOR'));
      assert.equal(major.body.decision, 'CREATE');
      await until(
        () => at('/noc').length === 1 || null,
        10_000,
        () => 'the MAJOR never reached the NOC',
      );
      await heldBy(s, gk, 'group_wait', 1);
      await caughtUp(s);
      assert.deepEqual(at('/pager'), [], 'the group waits its group_wait');
      assert.deepEqual(
        at('/noc').map((b) => [b.action, b.kind, b.key]),
        [['create', 'incident', major.body.dedup_key]],
        'the NOC takes the MAJOR alone, and no CRITICAL: the pager route took them as a group',
      );

      s.clock.advance(31 * S);
      await until(
        () => at('/pager').length === 1 || null,
        10_000,
        () => 'no group create after group_wait',
      );
      const created = at('/pager')[0]!;
      assert.deepEqual([created.action, created.kind, created.key, created.data.member_count, created.severity], ['create', 'group', gk, 3, 'CRITICAL']);
      assert.deepEqual(created.data.route_group, {
        route: '{}/{severity="CRITICAL"}/0',
        group_wait_ms: 30_000,
        group_interval_ms: 60_000,
        repeat_interval_ms: 600_000,
      });

      // Two changes after the first notification (a join and a leave) wait for the next tick, and go as one.
      const olt3 = (await s.post('/v1/incidents', incident('olt-3', 'rc-1'))).body.dedup_key as string;
      assert.equal((await s.post('/v1/incidents', incident('olt-4', 'rc-1'))).body.decision, 'CREATE');
      assert.equal((await s.del(`/v1/incidents/${olt3}`)).status, 204);
      await heldBy(s, gk, 'group_interval', 1);
      await caughtUp(s);
      assert.equal(at('/pager').length, 1, 'the changes wait for the group_interval tick');
      s.clock.advance(60 * S); // the tick: 30 s + 60 s after the group was made
      await until(
        () => at('/pager').length >= 2 || null,
        10_000,
        () => 'no update on the tick',
      );
      await caughtUp(s);
      const update = at('/pager');
      assert.equal(update.length, 2, `one update for both changes: ${update.map((b) => b.action).join(',')}`);
      assert.deepEqual([update[1]!.action, update[1]!.data.member_count], ['update', 3]);

      // Unchanged for repeat_interval after that tick: sent again on the tick at 90 s + 600 s, marked a repeat.
      s.clock.advance(560 * S); // 650 s: the repeat is due within a group_interval, and written ahead, held
      await heldBy(s, gk, 'group_interval', 2);
      await caughtUp(s);
      assert.equal(at('/pager').length, 2, 'the repeat waits for its tick');
      s.clock.advance(41 * S); // 691 s
      await until(
        () => at('/pager').length >= 3 || null,
        10_000,
        () => 'no repeat',
      );
      await caughtUp(s);
      const repeat = at('/pager');
      assert.equal(repeat.length, 3);
      assert.deepEqual([repeat[2]!.action, repeat[2]!.data.change.what, repeat[2]!.data.member_count], ['update', 'repeat', 3]);

      // The last members close: the group closes on its next tick.
      const keys = (await s.get(`/v1/groups/${gk}`)).body.members as string[];
      assert.equal(keys.length, 3);
      for (const k of keys) assert.equal((await s.del(`/v1/incidents/${k}`)).status, 204);
      await heldBy(s, gk, 'group_interval', 3);
      s.clock.advance(60 * S);
      await until(
        () => at('/pager').some((b) => b.action === 'close') || null,
        10_000,
        () => 'the group never closed',
      );
      await caughtUp(s);
      assert.deepEqual(
        at('/pager').map((b) => b.action),
        ['create', 'update', 'update', 'close'],
      );
      assert.equal(at('/noc').length, 1, 'the NOC saw only the MAJOR');
    });
  });

describe('route grouping config', () => {
  test('timings without a group_by on the route or above are refused, with where and why; a bad duration or label too', async () => {
    const { parseConfig } = await import('../../src/config/load.js');
    const loadConfigText = (text: string) => parseConfig(text, 'test.yaml');
    const base = `adapters: [ { name: noc, type: webhook, url: "http://127.0.0.1:9/x" } ]\n`;
    const cases: Array<[string, RegExp]> = [
      [`route: { receiver: noc, group_wait: 30s }`, /route\.group_wait: group_wait applies to groups, and no group_by is set/],
      [`route: { receiver: noc, routes: [ { matchers: ['a="b"'], repeat_interval: 1h } ] }`, /route\.routes\.0\.repeat_interval/],
      [`route: { receiver: noc, group_by: [a], group_interval: 5x }`, /"5x" is not a duration/],
      [`route: { receiver: noc, group_by: [a], group_wait: 31d }`, /longer than 30 days/],
      [`route: { receiver: noc, group_by: ['...', a] }`, /stands alone/],
      [`route: { receiver: noc, group_by: [a, a] }`, /names a label twice/],
      [`route: { receiver: noc, group_by: ['a-b'] }`, /must be a label name/],
    ];
    for (const [route, message] of cases) assert.throws(() => loadConfigText(base + route), message, route);
    // Set above, taken below: a child's timing under its parent's group_by is fine.
    assert.doesNotThrow(() => loadConfigText(`${base}route: { receiver: noc, group_by: [a], routes: [ { matchers: ['a="b"'], group_wait: 1s } ] }`));
  });
});
