// needs: redis postgres
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { inProcessServer, type InProcessServer } from '../helpers/server.js';
import { backendStores } from '../helpers/backends.js';
import type { ViewEvent } from '../../src/http/dashboard/public/explain.js';
import { describeEvent } from '../../src/http/dashboard/public/explain.js';
import { startSink } from '../fakes/http-fake.js';
import { until } from '../helpers/wait.js';

/**
 * Opsgenie's notes on an alert and its `responders` and `visibleTo`, as an
 * integration sends them: a note lands in the alert's history and its list,
 * never on a closed episode or another tenant's alert; responders are labels
 * routes match and a read answers as sent. Each refusal changes nothing.
 */
const path = (alias: string, what = '') => `/v2/alerts/${encodeURIComponent(alias)}${what}?identifierType=alias`;
const notesOf = async (s: InProcessServer, alias: string) => (await s.get(path(alias, '/notes'))).body;
const historyOf = async (s: InProcessServer, alias: string) =>
  ((await s.get(`/v1/incidents/${encodeURIComponent(`og:${alias}`)}/history`)).body?.events ?? []) as ViewEvent[];

for (const backend of ['sqlite', 'redis', 'postgres'] as const)
  describe(`Opsgenie notes on ${backend}`, () => {
    const stores = backendStores(backend);
    before(() => stores.start());
    after(() => stores.stop());

    test('a note is in the alert’s history and its list, newest first; a closed episode’s notes are not the next one’s', async () => {
      const s = await inProcessServer({ store: await stores.fresh() });
      try {
        assert.equal((await s.post('/v2/alerts', { message: 'disk full', alias: 'db1-disk' })).status, 202);
        const first = await s.post(path('db1-disk', '/notes'), { note: 'rebooted the array', user: 'noc-alice', source: 'runbook' });
        assert.equal(first.status, 202);
        assert.equal(first.body.result, 'Request will be processed');
        s.clock.advance(1000);
        assert.equal((await s.post(path('db1-disk', '/notes'), { note: 'second look:\nstill full' })).status, 202);
        const listed = await notesOf(s, 'db1-disk');
        assert.deepEqual(
          listed.data.map((n: { note: string; owner: string }) => [n.note, n.owner]),
          [
            ['second look:\nstill full', ''],
            ['rebooted the array', 'noc-alice'],
          ],
        );
        assert.ok(listed.data.every((n: { createdAt: string }) => Number.isFinite(Date.parse(n.createdAt))));
        const notes = (await historyOf(s, 'db1-disk')).filter((e) => e.type === 'note');
        assert.deepEqual(
          notes.map((e) => [e.note, e.user ?? null, e.source ?? null, e.via]),
          [
            ['rebooted the array', 'noc-alice', 'runbook', 'opsgenie'],
            ['second look:\nstill full', null, null, 'opsgenie'],
          ],
        );
        assert.equal(describeEvent(notes[0]!), 'note by "noc-alice" (via opsgenie): rebooted the array');
        // A note changes no decision: the alert is still one CREATE.
        assert.deepEqual(
          (await historyOf(s, 'db1-disk')).filter((e) => e.type === 'decision').map((e) => e.decision),
          ['CREATE'],
        );

        // Closed, then opened again: the new episode starts with no notes; the old ones stay in the history.
        assert.equal((await s.post(path('db1-disk', '/close'), {})).status, 202);
        s.clock.advance(1000);
        await s.post('/v2/alerts', { message: 'disk full again', alias: 'db1-disk' });
        assert.deepEqual((await notesOf(s, 'db1-disk')).data, []);
        assert.equal((await historyOf(s, 'db1-disk')).filter((e) => e.type === 'note').length, 2);
      } finally {
        await s.stop();
      }
    });

    test('a note on an alert with nothing open is answered 202 and kept nowhere; a bad note is 422 naming its field, and kept nowhere', async () => {
      const s = await inProcessServer({ store: await stores.fresh() });
      try {
        assert.equal((await s.post(path('never-made', '/notes'), { note: 'hello' })).status, 202);
        assert.equal((await s.get(`/v1/incidents/${encodeURIComponent('og:never-made')}/history`)).status, 404, 'no history was started');
        assert.equal((await s.get(path('never-made', '/notes'))).status, 404);
        await s.post('/v2/alerts', { message: 'm', alias: 'a1' });
        const bad: Array<[unknown, string]> = [
          [{}, 'note'],
          [{ note: '   ' }, 'note'],
          [{ note: 'x'.repeat(25_001) }, 'note'],
          [{ note: 7 }, 'note'],
          [{ note: 'ok', user: 'u'.repeat(101) }, 'user'],
          [{ note: 'ok', source: 'a\u0007b' }, 'source'],
          [[], 'body'],
        ];
        for (const [body, field] of bad) {
          const r = await s.post(path('a1', '/notes'), body);
          assert.equal(r.status, 422, JSON.stringify(body).slice(0, 60));
          assert.equal(typeof r.body.errors[field], 'string', `${JSON.stringify(body).slice(0, 60)} names ${field}: ${JSON.stringify(r.body)}`);
        }
        const tiny = await s.post('/v2/alerts/a1/notes?identifierType=tiny', { note: 'x' });
        assert.equal(tiny.status, 422);
        assert.match(tiny.body.errors.identifier, /tiny id is a number/);
        assert.deepEqual((await notesOf(s, 'a1')).data, [], 'nothing was kept');
      } finally {
        await s.stop();
      }
    });
  });

test('with history off a note cannot be kept: 422, saying so', async () => {
  const s = await inProcessServer({ store: 'memory', config: 'history: { max_events: 0 }\n' });
  try {
    await s.post('/v2/alerts', { message: 'm', alias: 'a1' });
    const r = await s.post(path('a1', '/notes'), { note: 'x' });
    assert.equal(r.status, 422);
    assert.match(r.body.errors.note, /history/);
  } finally {
    await s.stop();
  }
});

test('a note is its tenant’s: another tenant’s note on the same alias lands nowhere', async () => {
  const s = await inProcessServer({
    store: 'memory',
    config: 'tenants:\n  - { id: acme, tokens: [acme-token-0123456789abcdef] }\n  - { id: globex, tokens: [globex-token-0123456789abcdef] }\n',
  });
  try {
    const as = async (token: string, method: 'GET' | 'POST', url: string, body?: unknown) => {
      const r = await s.app.inject({
        method,
        url,
        headers: { authorization: `GenieKey ${token}`, 'content-type': 'application/json' },
        payload: body === undefined ? undefined : JSON.stringify(body),
      });
      return { status: r.statusCode, body: JSON.parse(r.payload) };
    };
    const acme = 'acme-token-0123456789abcdef';
    const globex = 'globex-token-0123456789abcdef';
    await as(acme, 'POST', '/v2/alerts', { message: 'm', alias: 'shared' });
    assert.equal((await as(globex, 'POST', path('shared', '/notes'), { note: 'from globex' })).status, 202);
    assert.equal((await as(acme, 'POST', path('shared', '/notes'), { note: 'from acme' })).status, 202);
    assert.deepEqual(
      (await as(acme, 'GET', path('shared', '/notes'))).body.data.map((n: { note: string }) => n.note),
      ['from acme'],
    );
    assert.equal((await as(globex, 'GET', path('shared', '/notes'))).status, 404);
    assert.equal((await as('wrong-token-0123456789abcdef', 'POST', path('shared', '/notes'), { note: 'x' })).status, 401);
  } finally {
    await s.stop();
  }
});

describe('Opsgenie responders and visibleTo', () => {
  const routes = `
adapters:
  - { name: noc, type: webhook, url: "http://127.0.0.1:9/noc" }
  - { name: dba, type: webhook, url: "http://127.0.0.1:9/dba" }
route:
  receiver: noc
  routes:
    - receiver: dba
      matchers: ['responders=~".*(^|,)team:dba(,|$).*"']
`;
  test('kept as labels routes match, answered on a read as sent', async () => {
    const s = await inProcessServer({ store: 'memory', config: routes });
    try {
      const responders = [
        { type: 'team', name: 'dba' },
        { type: 'user', username: 'alice@example.com' },
        { type: 'escalation', id: '4513b7ea-3b91-438f-b7e4-e3e54af9147c' },
      ];
      const visibleTo = [{ type: 'team', name: 'sre' }];
      assert.equal((await s.post('/v2/alerts', { message: 'replica lag', alias: 'db2-lag', responders, visibleTo })).status, 202);
      const read = (await s.get(path('db2-lag'))).body.data;
      assert.deepEqual(read.responders, responders);
      assert.deepEqual(read.details, {}, 'responders and visibleTo are not details');
      const incident = (await s.get(`/v1/incidents/${encodeURIComponent('og:db2-lag')}`)).body;
      assert.equal(incident.labels.responders, 'team:dba,user:alice@example.com,escalation#4513b7ea-3b91-438f-b7e4-e3e54af9147c');
      assert.equal(incident.labels.visibleTo, 'team:sre');
      // Live routing and the routes test agree: what pages the DBA team goes to its adapter.
      const routed = (await s.get(`/v1/incidents/${encodeURIComponent('og:db2-lag')}/history`)).body.events.find((e: ViewEvent) => e.type === 'routed');
      assert.deepEqual(routed?.adapters, ['dba']);
      const tested = await s.post('/v1/routes/test', { labels: incident.labels });
      assert.deepEqual(tested.body.adapters, ['dba']);
      // Without responders: no label, and the catch-all route.
      await s.post('/v2/alerts', { message: 'm', alias: 'plain' });
      assert.deepEqual((await s.get(path('plain'))).body.data.responders, []);
    } finally {
      await s.stop();
    }
  });

  test('POST …/responders adds one to the label, once; a bad one is refused and changes nothing', async () => {
    const s = await inProcessServer({ store: 'memory' });
    try {
      await s.post('/v2/alerts', { message: 'replica lag', alias: 'db3', responders: [{ type: 'team', name: 'dba' }] });
      const add = (responder: unknown) => s.post(path('db3', '/responders'), { responder, user: 'noc-alice' });
      const shown = async () => (await s.get(`/v1/incidents/${encodeURIComponent('og:db3')}`)).body;
      assert.equal((await add({ type: 'user', username: 'bob@example.com' })).status, 202);
      assert.equal((await shown()).labels.responders, 'team:dba,user:bob@example.com');
      assert.deepEqual((await s.get(path('db3'))).body.data.responders, [
        { type: 'team', name: 'dba' },
        { type: 'user', username: 'bob@example.com' },
      ]);
      const updates = (await shown()).updates;
      assert.equal(updates, 1, 'the addition is an update');
      assert.equal((await add({ type: 'team', name: 'dba' })).status, 202);
      assert.equal((await shown()).updates, updates, 'a responder it has already changes nothing');
      for (const bad of [undefined, { type: 'group', name: 'x' }, { type: 'team' }, { type: 'team', name: 'a,b' }, 'team:x']) {
        const r = await add(bad);
        assert.equal(r.status, 422, JSON.stringify(bad));
        assert.equal(typeof r.body.errors.responder, 'string', JSON.stringify(r.body));
      }
      assert.equal((await shown()).labels.responders, 'team:dba,user:bob@example.com', 'nothing changed');
      // An alias with nothing open: 202 as Opsgenie answers, and nothing opens.
      assert.equal((await s.post(path('never', '/responders'), { responder: { type: 'team', name: 'x' } })).status, 202);
      assert.equal((await s.get(path('never'))).status, 404);
    } finally {
      await s.stop();
    }
  });

  test('each edit’s update names what it changed in data.edited: tags, details, responders', async () => {
    const hook = await startSink(200, {});
    const s = await inProcessServer({ store: 'memory', config: `adapters: [ { name: hook, type: webhook, url: "${hook.url}/in" } ]\n` });
    try {
      await s.post('/v2/alerts', { message: 'm', alias: 'db4' });
      const edited = () => hook.requests.filter((r) => r.body.action === 'update').map((r) => r.body.data?.edited);
      const waitFor = (n: number) =>
        until(
          () => edited().length >= n || null,
          10_000,
          () => `updates: ${JSON.stringify(edited())}`,
        );
      // One at a time: each waits for the one before, so the receiver's order is the calls'.
      assert.equal((await s.post(path('db4', '/tags'), { tags: ['db'] })).status, 202);
      await waitFor(1);
      assert.equal((await s.post(path('db4', '/details'), { details: { runbook: 'rb/1' } })).status, 202);
      await waitFor(2);
      assert.equal((await s.post(path('db4', '/responders'), { responder: { type: 'team', name: 'dba' } })).status, 202);
      await waitFor(3);
      assert.deepEqual(edited(), ['tags', 'details', 'responders']);
    } finally {
      await s.stop();
      await hook.close();
    }
  });

  test('refused as Opsgenie refuses them, naming the field; nothing is stored', async () => {
    const s = await inProcessServer({ store: 'memory' });
    try {
      const bad: Array<[Record<string, unknown>, string]> = [
        [{ responders: 'team:noc' }, 'responders'],
        [{ responders: [{ name: 'noc' }] }, 'responders'],
        [{ responders: [{ type: 'group', name: 'noc' }] }, 'responders'],
        [{ visibleTo: [{ type: 'escalation', name: 'e' }] }, 'visibleTo'],
        [{ responders: [{ type: 'team' }] }, 'responders'],
        [{ responders: [{ type: 'team', name: 'a,b' }] }, 'responders'],
        [{ responders: Array.from({ length: 51 }, (_, i) => ({ type: 'team', name: `t${i}` })) }, 'responders'],
        [{ responders: Array.from({ length: 50 }, (_, i) => ({ type: 'team', name: `${i}`.padEnd(100, 'x') })) }, 'responders'],
        [{ details: { responders: 'x' } }, 'details'],
      ];
      for (const [extra, field] of bad) {
        const r = await s.post('/v2/alerts', { message: 'm', alias: 'r1', ...extra });
        assert.equal(r.status, 422, JSON.stringify(extra).slice(0, 80));
        assert.equal(typeof r.body.errors[field], 'string', `${JSON.stringify(extra).slice(0, 80)}: ${JSON.stringify(r.body)}`);
      }
      assert.equal((await s.get(path('r1'))).status, 404, 'nothing was stored');
    } finally {
      await s.stop();
    }
  });
});
