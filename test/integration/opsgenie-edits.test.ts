// needs: redis
/**
 * Opsgenie's alert edits, `PUT /v2/alerts/{identifier}/message`,
 * `/description` and `/priority`, `POST` and `DELETE …/tags` and
 * `…/details`, as an integration calls them: an UPDATE of
 * the open episode the call names, delivered to the alert's adapters; never
 * an alert opened; a bad body refused in Opsgenie's shape; edits racing each
 * other and the alert's own arrivals all kept.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startFake, type FakeServer } from '../fakes/http-fake.js';
import { inProcessServer, type InProcessServer } from '../helpers/server.js';
import { startRedis } from '../helpers/redis.js';
import { receiverQuiet } from '../helpers/settle.js';
import { until } from '../helpers/wait.js';

const alias = 'db1/disk';
const path = (field: string, identifier = alias, type = 'alias') => `/v2/alerts/${encodeURIComponent(identifier)}/${field}?identifierType=${type}`;
const shownPath = `/v1/incidents/${encodeURIComponent(`og:${alias}`)}`;

async function put(s: InProcessServer, url: string, body: unknown, method: 'PUT' | 'POST' = 'PUT') {
  const r = await s.app.inject({ method, url, headers: { 'content-type': 'application/json' }, payload: JSON.stringify(body) });
  return { status: r.statusCode, body: r.json() as Record<string, unknown> };
}

/** A DELETE as Opsgenie's clients send it: the list in the query, no body. */
async function del(s: InProcessServer, url: string) {
  const r = await s.app.inject({ method: 'DELETE', url });
  return { status: r.statusCode, body: r.json() as Record<string, unknown> };
}

const updates = (receiver: FakeServer) =>
  receiver.requests
    .filter((r) => r.body?.key === `og:${alias}`)
    .map((r) => `${r.body.action} ${r.body.severity} ${r.body.summary}${r.body.data?.description ? ` (${r.body.data.description})` : ''}`);

async function editsAsOpsgenie(s: InProcessServer, receiver: FakeServer) {
  // Nothing open: taken as Opsgenie takes it (202), and no alert is opened.
  assert.equal((await put(s, path('priority'), { priority: 'P1' })).status, 202);
  assert.equal((await s.get(shownPath)).status, 404, 'an edit opens nothing');

  await s.post('/v2/alerts', { message: 'disk full', alias, priority: 'P3', details: { team: 'dba' } });
  const id = (await s.get(`/v2/alerts/${encodeURIComponent(alias)}?identifierType=alias`)).body.data.id as string;
  const reworded = await put(s, path('message'), { message: 'disk full on /var', user: 'ann' });
  assert.deepEqual([reworded.status, reworded.body.result], [202, 'Request will be processed']);
  // The same message again (as Alertmanager's update_alerts sends with every repeat): nothing to send.
  assert.equal((await put(s, path('message'), { message: 'disk full on /var' })).status, 202);
  assert.equal((await put(s, path('description', id, 'id'), { description: 'grew 40 GB in an hour' })).status, 202, 'by the id a read answered');
  assert.equal((await put(s, path('priority'), { priority: 'P1' })).status, 202);

  const shown = (await s.get(shownPath)).body;
  assert.deepEqual([shown.summary, shown.severity, shown.labels.priority, shown.labels.team], ['disk full on /var', 'CRITICAL', 'P1', 'dba']);
  const read = (await s.get(`/v2/alerts/${encodeURIComponent(id)}`)).body.data;
  assert.deepEqual(
    [read.message, read.description, read.priority, read.count],
    ['disk full on /var', 'grew 40 GB in an hour', 'P1', 4],
    'Opsgenie’s read shows the edits',
  );
  await until(
    () => updates(receiver).length >= 4 || null,
    10_000,
    () => `delivered so far: ${updates(receiver).join('; ')}`,
  );
  assert.deepEqual(updates(receiver), [
    'create MINOR disk full',
    'update MINOR disk full on /var',
    'update MINOR disk full on /var (grew 40 GB in an hour)',
    'update CRITICAL disk full on /var (grew 40 GB in an hour)',
  ]);
  const reasons = ((await s.get(`${shownPath}/history`)).body.events as Array<{ type: string; decision?: string; reason?: string }>)
    .filter((e) => e.type === 'decision')
    .map((e) => `${e.decision}/${e.reason}`);
  assert.deepEqual(reasons, ['CREATE/new', 'UPDATE/amended', 'UPDATE/amended', 'UPDATE/severity']);

  // Bad bodies and identifiers: 422 in Opsgenie's shape naming the field, and nothing changes.
  for (const [url, body, field] of [
    [path('priority'), { priority: 'P9' }, 'priority'],
    [path('priority'), {}, 'priority'],
    [path('message'), { message: '   ' }, 'message'],
    [path('message'), { message: 7 }, 'message'],
    [path('message'), { message: 'a\u0007b' }, 'message'],
    [path('description'), { description: null }, 'description'],
    [path('description'), [], 'body'],
    [path('message', alias, 'tiny'), { message: 'x' }, 'identifier'],
    [path('message', alias, 'short'), { message: 'x' }, 'identifierType'],
    [path('message', alias, 'id'), { message: 'x' }, 'identifier'],
  ] as const) {
    const r = await put(s, url, body);
    assert.equal(r.status, 422, `${url} ${JSON.stringify(body)}: ${JSON.stringify(r.body)}`);
    assert.deepEqual(Object.keys(r.body.errors as object), [field]);
    assert.equal(typeof r.body.requestId, 'string');
  }
  const broken = await s.app.inject({ method: 'PUT', url: path('message'), headers: { 'content-type': 'application/json' }, payload: '{"message":' });
  assert.equal(broken.statusCode, 400);
  assert.equal(broken.json().message, 'Could not parse request body, please check your JSON.');
  assert.deepEqual((await s.get(shownPath)).body.summary, 'disk full on /var', 'nothing refused changed the alert');

  // Edits racing each other and the alert's own re-fires: every one is kept, none undoes another.
  const raced = await Promise.all([
    put(s, path('message'), { message: 'disk full on /var and /tmp' }),
    put(s, path('priority'), { priority: 'P2' }),
    s.post('/v2/alerts', { message: 'disk full on /var and /tmp', alias, priority: 'P2', details: { team: 'dba' } }),
    put(s, path('description'), { description: 'still growing' }),
  ]);
  assert.deepEqual(
    raced.map((r) => r.status),
    [202, 202, 202, 202],
  );
  const after = (await s.get(shownPath)).body;
  assert.deepEqual([after.summary, after.severity, after.labels.priority], ['disk full on /var and /tmp', 'MAJOR', 'P2']);

  // Tags and details: added and removed as labels, each change one update; the same again nothing.
  const labelsNow = async () => (await s.get(shownPath)).body.labels as Record<string, string>;
  await receiverQuiet(() => receiver.requests, 300, 10_000);
  const sentBefore = updates(receiver).length;
  assert.equal((await put(s, path('tags'), { tags: ['db', 'disk'] }, 'POST')).status, 202);
  assert.equal((await put(s, path('tags'), { tags: ['disk'] }, 'POST')).status, 202, 'a tag it has: nothing to send');
  assert.equal((await put(s, path('details'), { details: { 'Server Name': 'db1', runbook: 'rb/42' } }, 'POST')).status, 202);
  assert.deepEqual([(await labelsNow()).tags, (await labelsNow()).Server_Name, (await labelsNow()).runbook], ['db,disk', 'db1', 'rb/42']);
  assert.equal((await del(s, `${path('tags')}&tags=db`)).status, 202);
  assert.equal((await del(s, `${path('details')}&keys=${encodeURIComponent('Server Name')}`)).status, 202);
  const labels = await labelsNow();
  assert.deepEqual([labels.tags, labels.Server_Name, labels.runbook, labels.team], ['disk', undefined, 'rb/42', 'dba']);
  await until(
    () => updates(receiver).length >= sentBefore + 4 || null,
    10_000,
    () => `delivered so far: ${updates(receiver).join('; ')}`,
  );
  await receiverQuiet(() => receiver.requests, 300, 10_000);
  assert.equal(updates(receiver).length, sentBefore + 4, 'four changes, four updates: the repeated tag sent none');
  // What the alert cannot take, or a list that is not one: 422 naming it, and nothing changes.
  for (const [call, field] of [
    [() => put(s, path('tags'), { tags: Array.from({ length: 20 }, (_, i) => `t${i}`) }, 'POST'), 'tags'],
    [() => put(s, path('tags'), { tags: [] }, 'POST'), 'tags'],
    [() => put(s, path('tags'), { tags: ['x'.repeat(51)] }, 'POST'), 'tags'],
    [() => put(s, path('details'), { details: { priority: 'P5' } }, 'POST'), 'details'],
    [() => put(s, path('details'), { details: { a: 1 } }, 'POST'), 'details'],
    [() => del(s, path('tags')), 'tags'],
    [() => del(s, `${path('details')}&keys=priority`), 'keys'],
  ] as const) {
    const r = await call();
    assert.equal(r.status, 422, JSON.stringify(r.body));
    assert.deepEqual(Object.keys(r.body.errors as object), [field]);
  }
  assert.deepEqual(await labelsNow(), labels, 'nothing refused changed the labels');

  // Closed: an edit of it is taken, and opens nothing.
  await s.post(`/v2/alerts/${encodeURIComponent(alias)}/close?identifierType=alias`, {});
  assert.equal((await put(s, path('message'), { message: 'too late' })).status, 202);
  assert.equal((await put(s, path('priority', id, 'id'), { priority: 'P1' })).status, 202);
  assert.equal((await s.get(shownPath)).status, 404);
}

const withHook = (receiver: FakeServer) => `adapters: [ { name: hook, type: webhook, url: "${receiver.url}/in" } ]\n`;

test('Opsgenie alert edits: message, description and priority update the open episode, reach its adapters, never open one (memory)', async () => {
  const receiver = await startFake(() => ({ status: 200, body: {} }));
  const s = await inProcessServer({ store: 'memory', config: withHook(receiver) });
  try {
    await editsAsOpsgenie(s, receiver);
  } finally {
    await s.stop();
    await receiver.close();
  }
});

test('the same on Redis, where each edit is one script step on the episode as read', async () => {
  const redis = await startRedis();
  process.env.ONCEONLY_REDIS_ACCEPT_DATA_LOSS = '1';
  const receiver = await startFake(() => ({ status: 200, body: {} }));
  const s = await inProcessServer({ store: redis.url, config: withHook(receiver) });
  try {
    await editsAsOpsgenie(s, receiver);
  } finally {
    await s.stop();
    await receiver.close();
    await redis.stop();
    delete process.env.ONCEONLY_REDIS_ACCEPT_DATA_LOSS;
  }
});

test("an edit is the caller's tenant's: another tenant's alias is not open for it", async () => {
  const s = await inProcessServer({
    store: 'memory',
    config: 'tenants:\n  - { id: acme, tokens: [acme-token-0123456789abcdef] }\n  - { id: globex, tokens: [globex-token-0123456789abcdef] }\n',
  });
  const call = async (method: 'PUT' | 'POST', url: string, token: string, body: unknown) => {
    const r = await s.app.inject({
      method,
      url,
      headers: { authorization: `GenieKey ${token}`, 'content-type': 'application/json' },
      payload: JSON.stringify(body),
    });
    return r.statusCode;
  };
  try {
    assert.equal(await call('POST', '/v2/alerts', 'acme-token-0123456789abcdef', { message: 'disk full', alias }), 202);
    assert.equal(await call('PUT', path('priority'), 'globex-token-0123456789abcdef', { priority: 'P1' }), 202);
    assert.equal(await call('PUT', path('priority'), 'wrong-token-0123456789abcdef', { priority: 'P1' }), 401);
    const shown = await s.app.inject({ method: 'GET', url: shownPath, headers: { authorization: 'Bearer acme-token-0123456789abcdef' } });
    assert.equal(shown.json().severity, 'MINOR', "another tenant's edit changed nothing");
    const theirs = await s.app.inject({ method: 'GET', url: shownPath, headers: { authorization: 'Bearer globex-token-0123456789abcdef' } });
    assert.equal(theirs.statusCode, 404, 'nor opened anything of its own');
  } finally {
    await s.stop();
  }
});

test("Opsgenie's list: the caller's open alerts, sorted, paged; a query it cannot answer is refused, not widened", async () => {
  const s = await inProcessServer({
    store: 'memory',
    config: 'tenants:\n  - { id: acme, tokens: [acme-token-0123456789abcdef] }\n  - { id: globex, tokens: [globex-token-0123456789abcdef] }\n',
  });
  const call = async (method: 'GET' | 'POST', url: string, token: string, body?: unknown) => {
    const r = await s.app.inject({
      method,
      url,
      headers: { authorization: `GenieKey ${token}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      ...(body !== undefined ? { payload: JSON.stringify(body) } : {}),
    });
    return { status: r.statusCode, body: r.json() as any };
  };
  const acme = 'acme-token-0123456789abcdef';
  try {
    for (const [i, alias] of ['a1', 'a2', 'a3'].entries()) {
      await call('POST', '/v2/alerts', acme, { message: `m${i}`, alias, priority: 'P2' });
      s.clock.advance(1000);
    }
    await call('POST', '/v2/alerts', acme, { message: 'm1', alias: 'a2', priority: 'P2' }); // a repeat: count 2
    await call('POST', '/v1/incidents', acme, { element_id: 'olt-1', fault_class: 'LOS', root_cause_id: 'cut', severity: 'MAJOR' });
    await call('POST', '/v2/alerts', 'globex-token-0123456789abcdef', { message: 'theirs', alias: 'g1' });

    const all = await call('GET', '/v2/alerts', acme);
    assert.equal(all.status, 200);
    assert.deepEqual(
      all.body.data.map((a: any) => a.alias),
      ['a3', 'a2', 'a1'],
      "the newest first, Opsgenie's alerts only, the caller's only",
    );
    assert.deepEqual(Object.keys(all.body.data[0]).includes('details'), false, 'without details, as Opsgenie lists');
    assert.equal(typeof all.body.requestId, 'string');
    const paged = await call('GET', '/v2/alerts?query=status%3Aopen&sort=count&order=desc&offset=0&limit=1', acme);
    assert.deepEqual(
      paged.body.data.map((a: any) => [a.alias, a.count]),
      [['a2', 2]],
    );
    assert.deepEqual(
      (await call('GET', '/v2/alerts?order=asc&offset=1&limit=5', acme)).body.data.map((a: any) => a.alias),
      ['a2', 'a3'],
    );
    for (const [q, field] of [
      ['query=priority%3AP1', 'query'],
      ['limit=0', 'limit'],
      ['limit=101', 'limit'],
      ['offset=-1', 'offset'],
      ['sort=message', 'sort'],
      ['order=up', 'order'],
    ] as const) {
      const r = await call('GET', `/v2/alerts?${q}`, acme);
      assert.equal(r.status, 422, `${q}: ${JSON.stringify(r.body)}`);
      assert.deepEqual(Object.keys(r.body.errors), [field]);
    }
    assert.equal((await call('GET', '/v2/alerts', 'wrong-token-0123456789abcdef')).status, 401);
  } finally {
    await s.stop();
  }
});
