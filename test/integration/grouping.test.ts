// needs: redis postgres
import { afterEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { FakeServer } from '../fakes/http-fake.js';
import { startServicenowFake } from '../fakes/servicenow-fake.js';
import { startJiraFake } from '../fakes/jira-fake.js';
import { BACKENDS, backendWithSink, storeKeepsItsOwnTime } from '../helpers/backends.js';
import { inProcessServer, type InProcessServer } from '../helpers/server.js';
import { caughtUp } from '../helpers/settle.js';
import { until } from '../helpers/wait.js';
import { groupKeyOf } from '../../src/groups/groups.js';

/** How long the expiry test waits for the worker before it fails: a guard, not a measure (two test files share a loaded machine). */
const WAIT_MS = 30_000;

const S = 1000;
const config = (hook: FakeServer) => `
grouping: { by: [root_cause_id], wait_seconds: 30 }
incidents: { ttl_overrides: [ { fault_class: SHORT_LIVED, ttl_seconds: 1 } ] }
adapters:
  - { name: tickets, type: webhook, url: "${hook.url}/groups", grouped: true }
  - { name: plain, type: webhook, url: "${hook.url}/plain" }
`;
const incident = (element_id: string, root_cause_id: string, severity = 'MAJOR', fault_class = 'LOS') => ({ element_id, fault_class, root_cause_id, severity });
/** Nothing more arrives: every replica's delivery worker has caught up since this call (two idle passes each). */
const settle = (servers: InProcessServer[]) => caughtUp(servers);
/** A fixed shuffle (a small LCG), so a failure can be replayed. */
function shuffled<T>(xs: T[], seed: number): T[] {
  const out = [...xs];
  let s = seed;
  for (let i = out.length - 1; i > 0; i--) {
    s = (s * 1103515245 + 12345) % 2 ** 31;
    const j = s % (i + 1);
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

// A fiber cut: forty elements report one root cause, through two replicas
// where the store is shared, in a shuffled order and each twice. The grouped
// adapter must see one group; the plain one sees the forty incidents.
for (const backend of BACKENDS)
  describe(`grouping on ${backend}`, () => {
    const shared = backend !== 'memory' && backend !== 'sqlite';
    let hook: FakeServer;
    let replicas: InProcessServer[] = [];
    const stores = backendWithSink(backend, (h) => (hook = h));
    afterEach(async () => {
      await Promise.all(replicas.map((r) => r.stop()));
      replicas = [];
      hook.requests.length = 0;
    });
    const grouped = (key: string) => hook.requests.filter((r) => r.path === '/groups' && r.body.key === key);
    const plain = () => hook.requests.filter((r) => r.path === '/plain');
    /**
     * Waits until the group's create is held (its wait started) for both adapters, as the group's history
     * says: a `held` event is recorded once the store holds the delivery. So a clock move cannot race a
     * hold: a hold read before the move but written after it is due a second past the moved clock, which
     * a manual clock never reaches. The worker asks the holds before it asks whether an adapter takes the
     * entry, so the plain adapter's copy is held too. A count of held deliveries could be made up by
     * another key's holds (a muted member's, held again at every recheck) while one copy of the create
     * was still between its lease and its hold.
     */
    const createHeld = (r: InProcessServer, gk: string) =>
      until(
        async () => {
          const events = ((await r.get(`/v1/incidents/${gk}/history`)).body?.events ?? []) as Array<Record<string, unknown>>;
          const held = new Set(events.filter((e) => e.type === 'held' && e.by === 'group_wait' && e.action === 'create').map((e) => e.adapter));
          return held.has('tickets') && held.has('plain') ? true : null;
        },
        10_000,
        () => 'the group create was not held for both adapters',
      );
    const advance = (ms: number) => {
      for (const r of replicas) r.clock.advance(ms);
    };

    test('a storm of 40 is one group: one create after wait_seconds, an update per change, a close with the last member', async () => {
      const url = await stores.fresh();
      replicas = shared
        ? await Promise.all([0, 1].map(() => inProcessServer({ store: url, config: config(hook) })))
        : [await inProcessServer({ store: url, config: config(hook) })];
      const gk = groupKeyOf(['rc-17']);
      const elements = Array.from({ length: 40 }, (_, i) => `olt-${i}`);
      const sends = shuffled([...elements, ...elements], 17);
      const keys = new Map<string, string>();
      await Promise.all(
        sends.map(async (el, i) => {
          const r = await replicas[i % replicas.length]!.post('/v1/incidents', incident(el, 'rc-17', el === 'olt-7' ? 'CRITICAL' : 'MAJOR'));
          assert.equal(r.status, 200);
          keys.set(el, r.body.dedup_key);
        }),
      );
      await until(
        // Distinct keys: a replica that fails open under load may deliver a provisional copy of a create.
        () =>
          new Set(
            plain()
              .filter((r) => r.body.action === 'create')
              .map((r) => r.body.key),
          ).size === 40 || null,
        15_000,
        () => `${plain().length} plain`,
      );
      // The group is applied from the incidents' outbox, a moment after their decisions.
      await until(
        async () => (await replicas[0]!.get(`/v1/groups/${gk}`)).body?.members?.length === 40 || null,
        15_000,
        () => 'the group never had its 40',
      );
      await createHeld(replicas[0]!, gk);
      await settle(replicas);
      assert.deepEqual(grouped(gk), [], 'the group waits wait_seconds');
      assert.equal(hook.requests.filter((r) => r.path === '/groups' && r.body.kind === 'incident').length, 0, 'the grouped adapter takes no single incident');
      advance(31 * S);
      await until(
        () => grouped(gk).length > 0 || null,
        10_000,
        () => 'no group create',
      );
      await settle(replicas);
      assert.equal(
        grouped(gk).length,
        1,
        grouped(gk)
          .map((r) => r.body.action)
          .join(','),
      );
      const created = grouped(gk)[0]!.body;
      assert.deepEqual([created.action, created.kind, created.severity, created.data.members.length], ['create', 'group', 'CRITICAL', 40]);
      assert.deepEqual(created.data.members, [...keys.values()].sort());
      assert.equal(plain().filter((r) => r.body.kind === 'group').length, 0, 'the plain adapter takes no group');
      const view = await replicas[0]!.get(`/v1/groups/${gk}`);
      assert.equal(view.status, 200);
      assert.deepEqual([view.body.group_key, view.body.by, view.body.members.length, view.body.severity], [gk, { root_cause_id: 'rc-17' }, 40, 'CRITICAL']);

      // Each real change: one update. A repeat of a member changes nothing.
      const last = replicas.at(-1)!;
      assert.equal((await last.post('/v1/incidents', incident('olt-3', 'rc-17', 'MAJOR'))).body.decision, 'SUPPRESS');
      assert.equal((await last.post('/v1/incidents', incident('olt-3', 'rc-17', 'MINOR'))).body.decision, 'UPDATE');
      await until(
        () => grouped(gk).length === 2 || null,
        10_000,
        () => 'no update for the severity change',
      );
      assert.equal((await replicas[0]!.del(`/v1/incidents/${keys.get('olt-7')}`)).status, 204);
      await until(
        () => grouped(gk).length === 3 || null,
        10_000,
        () => 'no update for the leave',
      );
      await settle(replicas);
      const [sev, left] = [grouped(gk)[1]!.body, grouped(gk)[2]!.body];
      assert.deepEqual([sev.action, sev.data.members.length], ['update', 40]);
      assert.deepEqual([left.action, left.severity, left.data.members.length], ['update', 'MAJOR', 39], 'the CRITICAL member left: the group is MAJOR now');
      assert.equal((await replicas[0]!.get(`/v1/groups/${gk}`)).body.members.length, 39);

      // The rest close, from both replicas: updates, then one close with the last.
      const rest = shuffled(
        elements.filter((e) => e !== 'olt-7'),
        5,
      );
      for (const [i, el] of rest.entries()) assert.equal((await replicas[i % replicas.length]!.del(`/v1/incidents/${keys.get(el)}`)).status, 204);
      await until(
        () => grouped(gk).some((r) => r.body.action === 'close') || null,
        15_000,
        () => 'the group never closed',
      );
      await settle(replicas);
      const actions = grouped(gk).map((r) => r.body.action);
      assert.equal(actions.filter((a) => a === 'create').length, 1);
      assert.equal(actions.filter((a) => a === 'close').length, 1);
      assert.equal(actions.at(-1), 'close', 'the close is the last');
      assert.ok(actions.filter((a) => a === 'update').length <= 2 + 38, `${actions.length} deliveries for 41 changes`);
      assert.equal((await replicas[0]!.get(`/v1/groups/${gk}`)).status, 404);
    });

    test('a muted member neither opens its group nor joins its ticket until its silence ends', async () => {
      const url = await stores.fresh();
      replicas = shared
        ? await Promise.all([0, 1].map(() => inProcessServer({ store: url, config: config(hook) })))
        : [await inProcessServer({ store: url, config: config(hook) })];
      const [a, b] = [replicas[0]!, replicas.at(-1)!];
      const gk = groupKeyOf(['rc-quiet']);
      const silence = await a.post('/api/v2/silences', {
        matchers: [{ name: 'element_id', value: 'olt-muted.*', isRegex: true, isEqual: true }],
        startsAt: new Date(a.clock.now()).toISOString(),
        endsAt: new Date(a.clock.now() + 3600 * S).toISOString(),
        createdBy: 'noc',
        comment: 'planned work on olt-muted',
      });
      assert.equal(silence.status, 200);
      // Every replica applies a new silence within a second: wait until the other one does (on a key of another group).
      await until(
        async () => ((await b.post('/v1/incidents', incident('olt-muted-probe', 'rc-probe'))).body.muted !== null ? true : null),
        5000,
        () => 'replica b never applied the silence',
      );
      const muted = await b.post('/v1/incidents', incident('olt-muted', 'rc-quiet', 'CRITICAL'));
      assert.deepEqual([muted.body.decision, muted.body.muted?.by], ['CREATE', 'silence']);
      // Its only member muted: past the wait, and past the group's recheck, no group and no ticket.
      await new Promise((r) => setTimeout(r, 1500));
      advance(31 * S);
      await new Promise((r) => setTimeout(r, 1500));
      await settle(replicas);
      assert.deepEqual(grouped(gk), [], 'a group whose members are all muted makes no ticket');
      assert.equal((await a.get(`/v1/groups/${gk}`)).status, 404, 'the muted member did not join');

      // An unmuted member opens the group; its ticket names it alone. The clock moves only once the group's
      // create is held for both adapters (see createHeld).
      const open = await a.post('/v1/incidents', incident('olt-open', 'rc-quiet', 'MAJOR'));
      assert.equal(open.body.muted, null);
      await until(
        async () => (await a.get(`/v1/groups/${gk}`)).status === 200 || null,
        10_000,
        () => 'the group never formed',
      );
      await createHeld(a, gk);
      advance(31 * S);
      await until(
        () => grouped(gk).length > 0 || null,
        10_000,
        () => 'no group create',
      );
      await settle(replicas);
      const created = grouped(gk)[0]!.body;
      assert.deepEqual([created.action, created.severity, created.data.members], ['create', 'MAJOR', [open.body.dedup_key]]);
      assert.equal(grouped(gk).length, 1);

      // The silence ends: the held member joins at its next look, and the ticket says so once.
      assert.equal((await a.del(`/api/v2/silence/${silence.body.silenceID}`)).status, 200);
      for (let i = 0; i < 20 && grouped(gk).length < 2; i++) {
        advance(1 * S);
        await new Promise((r) => setTimeout(r, 300));
      }
      await settle(replicas);
      assert.equal(
        grouped(gk).length,
        2,
        grouped(gk)
          .map((r) => r.body.action)
          .join(','),
      );
      const joined = grouped(gk)[1]!.body;
      assert.deepEqual([joined.action, joined.severity, joined.data.members], ['update', 'CRITICAL', [muted.body.dedup_key, open.body.dedup_key].sort()]);
    });

    test('a member whose `by` label changes moves to its new group: it leaves the old one, never in two', async () => {
      replicas = [
        await inProcessServer({
          store: await stores.fresh(),
          config: `grouping: { by: [severity], wait_seconds: 30 }\nadapters: [ { name: tickets, type: webhook, url: "${hook.url}/groups", grouped: true } ]\n`,
        }),
      ];
      const [s] = replicas as [InProcessServer];
      const [major, critical] = [groupKeyOf(['MAJOR']), groupKeyOf(['CRITICAL'])];
      const key = (await s.post('/v1/incidents', incident('olt-move', 'rc-move', 'MAJOR'))).body.dedup_key as string;
      const other = (await s.post('/v1/incidents', incident('olt-stay', 'rc-move', 'MAJOR'))).body.dedup_key as string;
      await until(
        async () => ((await s.get(`/v1/groups/${major}`)).body?.members?.length === 2 ? true : null),
        10_000,
        () => 'the MAJOR group never had both',
      );
      assert.equal((await s.post('/v1/incidents', incident('olt-move', 'rc-move', 'CRITICAL'))).body.decision, 'UPDATE');
      await until(
        async () => ((await s.get(`/v1/groups/${critical}`)).status === 200 ? true : null),
        10_000,
        () => 'the CRITICAL group never formed',
      );
      await until(
        async () => ((await s.get(`/v1/groups/${major}`)).body?.members?.length === 1 ? true : null),
        10_000,
        () => 'the member is still in its old group',
      );
      assert.deepEqual((await s.get(`/v1/groups/${major}`)).body.members, [other]);
      assert.deepEqual((await s.get(`/v1/groups/${critical}`)).body.members, [key]);
    });

    test('a member that expires leaves its group; a group that closes before its wait delivers nothing', async () => {
      replicas = [await inProcessServer({ store: await stores.fresh(), config: config(hook), sweepIntervalMs: 100 })];
      const [s] = replicas as [InProcessServer];
      const gk = groupKeyOf(['rc-9']);
      await s.post('/v1/incidents', incident('node-1', 'rc-9', 'MAJOR'));
      await until(
        async () => (await s.get(`/v1/groups/${gk}`)).status === 200 || null,
        WAIT_MS,
        () => 'the group never formed',
      );
      await createHeld(s, gk);
      advance(31 * S);
      await until(
        () => grouped(gk).length === 1 || null,
        WAIT_MS,
        () => 'no group create',
      );
      // A member that lives one second joins, and is never closed: it expires.
      await s.post('/v1/incidents', incident('node-2', 'rc-9', 'CRITICAL', 'SHORT_LIVED'));
      await until(
        () => grouped(gk).length === 2 || null,
        WAIT_MS,
        () => 'the join made no update',
      );
      assert.deepEqual([grouped(gk)[1]!.body.severity, grouped(gk)[1]!.body.data.members.length], ['CRITICAL', 2]);
      // Past its second (on the store's own clock where it keeps one), the sweep finds it gone.
      if (storeKeepsItsOwnTime(backend)) await new Promise((r) => setTimeout(r, 1500));
      advance(2 * S);
      await until(
        () => grouped(gk).length === 3 || null,
        WAIT_MS,
        () => 'the expired member did not leave',
      );
      const left = grouped(gk)[2]!.body;
      assert.deepEqual([left.action, left.severity, left.data.members.length], ['update', 'MAJOR', 1]);
      assert.deepEqual((await s.get(`/v1/groups/${gk}`)).body.members.length, 1);

      const quick = groupKeyOf(['rc-quick']);
      const k = (await s.post('/v1/incidents', incident('node-3', 'rc-quick'))).body.dedup_key as string;
      await until(
        async () => (await s.get(`/v1/groups/${quick}`)).status === 200 || null,
        WAIT_MS,
        () => 'the quick group never formed',
      );
      await createHeld(s, quick);
      assert.equal((await s.del(`/v1/incidents/${k}`)).status, 204);
      await until(
        async () => (await s.get(`/v1/groups/${quick}`)).status === 404 || null,
        WAIT_MS,
        () => 'the quick group never closed',
      );
      // Still inside the wait: the held create is looked at again, finds its close behind it, and both go.
      advance(10 * S);
      // Time goes on inside the wait, a second at a time: the create is looked at again each second, and
      // once its close has been fanned out behind it (a pass after the close), both go. 15 s: still inside.
      for (let i = 0; i < 15 && (await s.store.deliveries.backlog()).held > 0; i++) {
        advance(1 * S);
        await new Promise((r) => setTimeout(r, 300));
      }
      assert.equal((await s.store.deliveries.backlog()).held, 0, 'the held create was dropped with its close');
      advance(21 * S);
      await settle(replicas);
      assert.deepEqual(grouped(quick), [], 'created and closed inside its wait: no ticket');
      assert.equal((await s.get(`/v1/groups/${quick}`)).status, 404);
      assert.equal((await s.get('/v1/groups/not-a-group')).status, 400);
    });
  });

// ServiceNow and Jira keep one record per group key, with the members in it,
// and resolve it when the group closes (their fakes speak the real REST shapes).
test('grouped ServiceNow and Jira: one record per group, carrying its members, closed with the group', async () => {
  const [snow, jira] = await Promise.all([startServicenowFake(), startJiraFake()]);
  const s = await inProcessServer({
    store: 'memory',
    config: `
grouping: { by: [root_cause_id], wait_seconds: 30 }
adapters:
  - { name: snow, type: servicenow, instance_url: "${snow.url}", username: onceonly, password: secret, grouped: true }
  - { name: jira, type: jira, base_url: "${jira.url}", project: QA, username: bot@example.com, api_token: api-token, grouped: true }
`,
  });
  try {
    const gk = groupKeyOf(['rc-5']);
    const keys: string[] = [];
    for (const el of ['olt-a', 'olt-b', 'olt-c']) keys.push((await s.post('/v1/incidents', incident(el, 'rc-5'))).body.dedup_key);
    await until(
      async () => (await s.get(`/v1/groups/${gk}`)).body?.members?.length === 3 || null,
      WAIT_MS,
      () => 'the group never had its 3',
    );
    await until(
      async () => ((await s.store.deliveries.backlog()).held >= 2 ? true : null),
      WAIT_MS,
      () => 'the creates were not held',
    );
    s.clock.advance(31 * S);
    await until(
      () => (snow.records.size === 1 && jira.issues.size === 1) || null,
      WAIT_MS,
      () => `${snow.records.size} records, ${jira.issues.size} issues`,
    );
    const record = [...snow.records.values()][0]!;
    const issue = [...jira.issues.values()][0]!;
    const openState = record.state;
    for (const k of keys) {
      assert.ok(String(record.description).includes(k), `the ServiceNow record names ${k}`);
      assert.ok(issue.fields.description.includes(k), `the Jira issue names ${k}`);
    }
    for (const k of keys) assert.equal((await s.del(`/v1/incidents/${k}`)).status, 204);
    await until(
      () => ([...snow.records.values()][0]!.state !== openState && [...jira.issues.values()][0]!.fields.status.statusCategory.key === 'done') || null,
      WAIT_MS,
      () => 'the records were not closed with the group',
    );
    assert.equal(snow.records.size, 1, 'still one ServiceNow record');
    assert.equal(jira.issues.size, 1, 'still one Jira issue');
  } finally {
    await s.stop();
    await Promise.all([snow.close(), jira.close()]);
  }
});
