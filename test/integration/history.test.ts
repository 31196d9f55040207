// needs: redis postgres
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { BACKENDS, backendStores, storeKeepsItsOwnTime } from '../helpers/backends.js';
import { inProcessServer, type InProcessServer } from '../helpers/server.js';
import { until } from '../helpers/wait.js';
import { startServicenowFake } from '../fakes/servicenow-fake.js';
import type { FakeServer } from '../fakes/http-fake.js';
import type { SnowRecord } from '../fakes/servicenow-fake.js';
import { PG_URL } from '../helpers/postgres.js';
import type { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import type { RedisStore } from '../../src/store/redis/redis-store.js';
import { groupKeyOf } from '../../src/groups/groups.js';
import { answer, type ViewEvent } from '../../src/http/dashboard/public/explain.js';
import { oltIncident as incident } from '../helpers/delivery.js';

/**
 * Each key's history through the running server, on every store: the
 * timeline of one key's decisions and delivery attempts (with the
 * receiver's ticket), a silence named in it, its survival past the close,
 * and its bounds under 10,000 arrivals.
 */

// No SUPPRESS is a lost race here: the three repeats are one run of `unchanged`.
const snowAt = (url: string) => `
incidents: { race_window_ms: 0 }
delivery: { base_delay_ms: 1, max_delay_ms: 5 }
adapters:
  - { name: snow, type: servicenow, instance_url: "${url}", username: onceonly, password: secret }
`;

/** Rows (or list entries) of every key's history the store holds now. */
async function storedEvents(s: InProcessServer, storeUrl: string, key: string): Promise<number> {
  // A shared store is wrapped by fail-open: its inner store holds the data.
  const raw = (s.store as { inner?: unknown }).inner ?? s.store;
  if (s.store.kind === 'sqlite') return ((raw as SqliteStore).database.prepare('SELECT count(*) AS n FROM history').get() as { n: number }).n;
  if (s.store.kind === 'postgres') {
    const schema = new URL(storeUrl).searchParams.get('schema');
    const c = new pg.Client({ connectionString: PG_URL });
    await c.connect();
    try {
      return Number((await c.query(`SELECT count(*) AS n FROM "${schema}".history`)).rows[0].n);
    } finally {
      await c.end();
    }
  }
  if (s.store.kind.startsWith('redis')) {
    const r = raw as RedisStore;
    const k = r.layout.historyKey('default', key);
    return Number(await r.conn.send(k, ['LLEN', k]));
  }
  return (await s.store.history.read('default', key)).length;
}

for (const backend of BACKENDS)
  describe(`key history on ${backend}`, () => {
    const stores = backendStores(backend);
    let snow: FakeServer & { records: Map<string, SnowRecord> };
    before(async () => {
      await stores.start();
      snow = await startServicenowFake();
    });
    after(async () => {
      await snow.close();
      await stores.stop();
    });

    const history = async (s: InProcessServer, key: string) => {
      const r = await s.get(`/v1/incidents/${encodeURIComponent(key)}/history`);
      return r.status === 200 ? (r.body.events as ViewEvent[]) : [];
    };
    /** Waits for `ready` over the key's history, moving the server's clock on (retries fall due on it where the store keeps no time of its own). */
    const waitFor = (s: InProcessServer, key: string, ready: (events: ViewEvent[]) => boolean, what: string) => {
      let last: ViewEvent[] = [];
      return until(
        async () => {
          if (!storeKeepsItsOwnTime(backend)) s.clock.advance(20);
          last = await history(s, key);
          return ready(last) || null;
        },
        20_000,
        () => `${what}: ${last.map((e) => `${e.type}:${String(e.decision ?? e.status ?? '')}`).join(' ')}`,
      );
    };

    test('a timeline: CREATE, one folded SUPPRESS run, UPDATE, two failed attempts then the receiver’s ticket; kept after the close', async () => {
      snow.requests.length = 0;
      let calls = 0;
      // The receiver's first two calls fail: the create's first two attempts.
      snow.faults = () => (++calls <= 2 ? { status: 503 } : 'ok');
      const s = await inProcessServer({ store: await stores.fresh(), config: snowAt(snow.url) });
      try {
        const first = await s.post('/v1/incidents', incident());
        const key = first.body.dedup_key as string;
        s.clock.advance(1);
        for (let i = 0; i < 3; i++) assert.equal((await s.post('/v1/incidents', incident())).body.decision, 'SUPPRESS');
        assert.equal((await s.post('/v1/incidents', incident({ severity: 'CRITICAL' }))).body.decision, 'UPDATE');
        const events = await waitFor(
          s,
          key,
          (ev) => ev.filter((e) => e.type === 'delivery' && e.status === 'delivered').length >= 2,
          'the create and the update delivered',
        ).then(() => history(s, key));

        // The decisions' own order; a delivery attempt the worker made meanwhile may sit
        // between two repeats, and then it splits their run, so the runs are summed.
        const decisions = events.filter((e) => e.type === 'decision');
        const suppressed = decisions.filter((e) => e.decision === 'SUPPRESS');
        assert.deepEqual(
          decisions.filter((e) => e.decision !== 'SUPPRESS').map((e) => [e.decision, e.reason, e.count ?? null]),
          [
            ['CREATE', 'new', null],
            ['UPDATE', 'severity', null],
          ],
        );
        assert.deepEqual(
          [decisions[0]!.decision, decisions.at(-1)!.decision, ...new Set(suppressed.map((e) => e.reason))],
          ['CREATE', 'UPDATE', 'unchanged'],
          'the repeats lie between the CREATE and the UPDATE',
        );
        assert.equal(
          suppressed.reduce((n, e) => n + Number(e.count), 0),
          3,
          'three repeats, counted',
        );
        // Folded: no two repeats lie side by side in the timeline as events of their own.
        const adjacent = events.filter((e, i) => i > 0 && e.decision === 'SUPPRESS' && events[i - 1]!.decision === 'SUPPRESS');
        assert.deepEqual(adjacent, [], 'a run of repeats is one event');
        const run = suppressed[0]!;
        assert.ok(Date.parse(String(run.first_at)) <= Date.parse(String(run.last_at)), 'the run has its first and last time');
        assert.equal(decisions[0]!.severity, 'MAJOR');
        assert.equal(decisions.at(-1)!.severity, 'CRITICAL');

        const attempts = events.filter((e) => e.type === 'delivery' && e.action === 'create');
        assert.deepEqual(
          attempts.map((e) => e.status),
          ['failed', 'failed', 'delivered'],
        );
        // Attempts count up from 1; a repeat that arrives while the create is failing re-queues it
        // (due at once, its backoff started again), so the count starts again after one. Whether a
        // repeat lands between two attempts is the worker's timing; the numbering must follow it.
        let expected = 0;
        const numbering = events.flatMap((e) => {
          if (e.type === 'decision' && expected > 0) expected = 0;
          if (e.type !== 'delivery' || e.action !== 'create') return [];
          expected++;
          return [[e.attempt, expected]];
        });
        assert.deepEqual(
          numbering.map(([got]) => got),
          numbering.map(([, want]) => want),
          'each attempt numbered since the last re-queue',
        );
        assert.match(String(attempts[0]!.error), /503/);
        const [rec] = [...snow.records.values()];
        assert.deepEqual(attempts[2]!.ticket, { number: rec!.number, sys_id: rec!.sys_id }, "the receiver's number and sys_id");
        assert.equal(answer(key, events), `ticket: ${rec!.number} at snow`);
        // Oldest first, and every time in RFC 3339.
        const times = events.map((e) => Date.parse(e.at));
        assert.ok(
          times.every((t, i) => Number.isFinite(t) && (i === 0 || t >= times[i - 1]!)),
          'oldest first',
        );

        // After the end: the key closes and is gone; its history is not.
        assert.equal((await s.del(`/v1/incidents/${encodeURIComponent(key)}`)).status, 204);
        assert.equal((await s.get(`/v1/incidents/${encodeURIComponent(key)}`)).status, 404);
        await waitFor(s, key, (ev) => ev.some((e) => e.type === 'delivery' && e.action === 'close' && e.status === 'delivered'), 'the close delivered');
        const after = await history(s, key);
        assert.ok(after.some((e) => e.type === 'closed'));
        assert.equal(answer(key, after), `ticket: ${rec!.number} at snow (since closed)`);
      } finally {
        snow.faults = () => 'ok';
        await s.stop();
      }
    });

    test('a silenced key’s history names the silence, and the answer says so', async () => {
      const s = await inProcessServer({ store: await stores.fresh(), config: snowAt(snow.url) });
      try {
        const made = await s.post('/api/v2/silences', {
          matchers: [{ name: 'element_id', value: 'olt-9', isRegex: false, isEqual: true }],
          startsAt: new Date(s.clock.now() - 1000).toISOString(),
          endsAt: new Date(s.clock.now() + 3_600_000).toISOString(),
          createdBy: 'noc-alice',
          comment: 'splicing fiber 12',
        });
        assert.equal(made.status, 200);
        const id = made.body.silenceID as string;
        const key = (await s.post('/v1/incidents', incident({ element_id: 'olt-9' }))).body.dedup_key as string;
        await waitFor(s, key, (ev) => ev.some((e) => e.type === 'muted'), 'muted');
        const events = await history(s, key);
        const muted = events.find((e) => e.type === 'muted')!;
        assert.deepEqual([muted.by, muted.id, muted.comment, muted.created_by, muted.adapter], ['silence', id, 'splicing fiber 12', 'noc-alice', 'snow']);
        assert.equal(typeof muted.until, 'string');
        assert.equal(answer(key, events), `no ticket: muted by silence ${id} ("splicing fiber 12", by noc-alice) until ${String(muted.until)}`);
      } finally {
        await s.stop();
      }
    });

    test('a dead letter, its retry by an operator and the ticket after it; another dropped: each in its key’s history and answer', async () => {
      snow.faults = (r) => (r.method === 'GET' ? { status: 400, body: { error: { message: 'Invalid query' }, status: 'failure' } } : 'ok');
      const s = await inProcessServer({ store: await stores.fresh(), config: snowAt(snow.url) });
      try {
        const keyOf = async (element_id: string) => (await s.post('/v1/incidents', incident({ element_id }))).body.dedup_key as string;
        const retried = await keyOf('olt-r');
        const dropped = await keyOf('olt-d');
        for (const k of [retried, dropped]) await waitFor(s, k, (ev) => ev.some((e) => e.type === 'dead_letter'), 'parked');
        assert.match(answer(retried, await history(s, retried)), /^no ticket: dead letter at snow: .*HTTP 400/);
        const idOf = async (k: string) => (await history(s, k)).find((e) => e.type === 'dead_letter')!.id as string;
        snow.faults = () => 'ok';
        assert.equal((await s.post(`/v1/dead-letters/${encodeURIComponent(await idOf(retried))}/retry`, {})).status, 202);
        assert.equal((await s.del(`/v1/dead-letters/${encodeURIComponent(await idOf(dropped))}`)).status, 204);
        await waitFor(s, retried, (ev) => ev.some((e) => e.type === 'delivery' && e.status === 'delivered'), 'delivered after the retry');
        const r = await history(s, retried);
        assert.deepEqual(
          r.filter((e) => e.type !== 'decision').map((e) => [e.type, e.status ?? null]),
          [
            ['delivery', 'failed'],
            ['dead_letter', null],
            ['retried', null],
            ['delivery', 'delivered'],
          ],
        );
        assert.match(answer(retried, r), /^ticket: INC\d+ at snow$/);
        const d = await history(s, dropped);
        assert.equal(d.at(-1)!.type, 'dropped');
        assert.match(answer(dropped, d), /^no ticket: its dead letter at snow was dropped by an operator/);
      } finally {
        snow.faults = () => 'ok';
        await s.stop();
      }
    });

    test('a violation’s window key and a group key have histories too', async () => {
      const config = `${snowAt(snow.url).replace('password: secret }', 'password: secret, grouped: true }')}grouping: { by: [root_cause_id], wait_seconds: 0 }\n`;
      const s = await inProcessServer({ store: await stores.fresh(), config });
      try {
        const v = { process_id: 'etch-3', rule_id: 'nelson_1', timestamp: 1770000000, value: 12.9, center: 10, ucl: 12.5, lcl: 7.5 };
        const first = await s.post('/v1/violations', v);
        assert.equal((await s.post('/v1/violations', v)).body.decision, 'SUPPRESS');
        const window = await history(s, first.body.key as string);
        assert.deepEqual(
          window.filter((e) => e.type === 'decision').map((e) => [e.decision, e.count ?? null]),
          [
            ['CREATE', null],
            ['SUPPRESS', 1],
          ],
        );
        await s.post('/v1/incidents', incident({ root_cause_id: 'cut-77' }));
        const group = groupKeyOf(['cut-77']);
        await waitFor(
          s,
          group,
          (ev) => ev.some((e) => e.type === 'delivery' && e.status === 'delivered' && e.action === 'create'),
          'the group’s create delivered',
        );
        const g = await history(s, group);
        assert.ok(g.some((e) => e.type === 'delivery' && e.adapter === 'snow' && (e.ticket as { number?: string } | undefined)?.number));
      } finally {
        await s.stop();
      }
    });

    test('bounded: 10,000 arrivals of one key keep at most max_events, and the store holds no more', async () => {
      const url = await stores.fresh();
      const s = await inProcessServer({ store: url, config: 'history: { max_events: 20 }\n' });
      try {
        // Every arrival changes severity: each is an UPDATE, its own event (a SUPPRESS run would fold).
        const batch = (from: number) =>
          Array.from({ length: 5000 }, (_, i) => JSON.stringify(incident({ element_id: 'olt-bound', severity: (from + i) % 2 ? 'MINOR' : 'MAJOR' }))).join(
            '\n',
          );
        const post = async (from: number) => {
          const r = await s.app.inject({ method: 'POST', url: '/v1/incidents', headers: { 'content-type': 'application/x-ndjson' }, payload: batch(from) });
          assert.equal(r.statusCode, 200);
        };
        await post(0);
        const key = (await s.post('/v1/incidents', incident({ element_id: 'olt-bound', severity: 'CRITICAL' }))).body.dedup_key as string;
        const half = await history(s, key);
        const sizeAtHalf = await storedEvents(s, url, key);
        await post(5001);
        const full = await history(s, key);
        assert.equal(half.length, 20);
        assert.equal(full.length, 20, 'at most max_events');
        assert.equal(full.at(-1)!.decision, 'UPDATE');
        assert.equal(await storedEvents(s, url, key), sizeAtHalf, 'the store holds as many after 10,000 arrivals as after 5,000');
        assert.ok(sizeAtHalf <= 20);
      } finally {
        await s.stop();
      }
    });

    test('copies of a new key sent at once: its history opens with the CREATE, then the copies it beat', async () => {
      const s = await inProcessServer({ store: await stores.fresh() });
      try {
        // Three copies of each of 48 new keys in flight together, as an Alertmanager HA pair
        // and a retry send them: one CREATE per key, decided with the copies that lost.
        const copies = Array.from({ length: 48 }, (_, k) => Array.from({ length: 3 }, () => incident({ element_id: `olt-race-${k}` }))).flat();
        const answers = await Promise.all(copies.map((c) => s.post('/v1/incidents', c)));
        const keys = [...new Set(answers.map((a) => a.body.dedup_key as string))];
        assert.equal(keys.length, 48);
        assert.equal(answers.filter((a) => a.body.decision === 'CREATE').length, 48, 'one CREATE per key');
        const wrong: string[] = [];
        for (const key of keys) {
          const decisions = (await waitFor(s, key, (ev) => ev.some((e) => e.type === 'decision'), 'the decisions recorded').then(() => history(s, key))).filter(
            (e) => e.type === 'decision',
          );
          const order = decisions.map((e) => `${e.decision}/${e.reason}${e.count ? `×${e.count}` : ''}`).join(' ');
          if (decisions[0]?.decision !== 'CREATE' || decisions.slice(1).some((e) => e.decision !== 'SUPPRESS')) wrong.push(`${key}: ${order}`);
        }
        assert.deepEqual(wrong, [], 'each history in the order its store decided');
      } finally {
        await s.stop();
      }
    });

    test('a key with no history answers 404, a malformed key 400; neither changes anything', async () => {
      const s = await inProcessServer({ store: await stores.fresh() });
      try {
        const none = await s.get(`/v1/incidents/${encodeURIComponent(`dedup:${'0'.repeat(32)}`)}/history`);
        assert.equal(none.status, 404);
        assert.equal(none.body.error.code, 'not_found');
        for (const bad of ['nope', `dedup:${'A'.repeat(32)}`, `group:${'0'.repeat(31)}`]) {
          const r = await s.get(`/v1/incidents/${encodeURIComponent(bad)}/history`);
          assert.equal(r.status, 400, bad);
          assert.equal(r.body.error.code, 'invalid_input');
        }
        assert.deepEqual((await s.get('/v1/incidents')).body.incidents, []);
      } finally {
        await s.stop();
      }
    });
  });
