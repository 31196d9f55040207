// needs: redis
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { inProcessServer, type InProcessServer } from '../helpers/server.js';
import { startRedis } from '../helpers/redis.js';
import { testSeed } from '../helpers/seed.js';
import { ogTinyId } from '../../src/inputs/opsgenie/alert-id.js';

const get = (s: InProcessServer, identifier: string, type?: string) =>
  s.get(`/v2/alerts/${encodeURIComponent(identifier)}${type === undefined ? '' : `?identifierType=${type}`}`);

/** One alert's life read through Opsgenie's GET, by alias and by the id the read answers. */
async function readsAsOpsgenie(s: InProcessServer) {
  const alert = {
    message: 'disk full on db1',
    alias: 'db1/disk ü',
    priority: 'P2',
    source: 'nagios',
    entity: 'db1',
    tags: ['db', 'disk'],
    details: { team: 'dba' },
  };
  assert.equal((await get(s, alert.alias, 'alias')).status, 404, 'nothing open yet');
  assert.equal((await s.post('/v2/alerts', alert)).status, 202);
  await s.post('/v2/alerts', alert);
  const byAlias = await get(s, alert.alias, 'alias');
  assert.equal(byAlias.status, 200, JSON.stringify(byAlias.body));
  const a = byAlias.body.data;
  assert.equal(typeof byAlias.body.requestId, 'string');
  assert.equal(typeof byAlias.body.took, 'number');
  assert.deepEqual(
    [a.alias, a.message, a.status, a.acknowledged, a.priority, a.source, a.entity, a.tags, a.count, a.details],
    [alert.alias, alert.message, 'open', false, 'P2', 'nagios', 'db1', ['db', 'disk'], 2, { team: 'dba' }],
  );
  assert.ok(Number.isFinite(Date.parse(a.createdAt)) && Number.isFinite(Date.parse(a.lastOccurredAt)));
  // The id is what a client keeps; the default identifierType reads by it.
  const byId = await get(s, a.id);
  assert.equal(byId.status, 200);
  assert.deepEqual(byId.body.data, a);
  assert.equal((await get(s, a.id, 'id')).body.data.alias, alert.alias);

  assert.equal((await s.post(`/v2/alerts/${encodeURIComponent(alert.alias)}/acknowledge?identifierType=alias`, {})).status, 202);
  assert.equal((await get(s, a.id)).body.data.acknowledged, true, 'the acknowledgement is read back');
  assert.equal((await s.post(`/v2/alerts/${encodeURIComponent(alert.alias)}/close?identifierType=alias`, {})).status, 202);
  const gone = await get(s, a.id);
  assert.equal(gone.status, 404);
  assert.equal(gone.body.message, 'Alert does not exist');
  // A new episode of the alias is a new alert (a moment later): the old id finds nothing, the alias finds the new one, not acknowledged.
  s.clock.advance(1000);
  await new Promise((r) => setTimeout(r, 5));
  await s.post('/v2/alerts', { ...alert, priority: 'P1' });
  assert.equal((await get(s, a.id)).status, 404, "an earlier episode's id finds nothing");
  const again = (await get(s, alert.alias, 'alias')).body.data;
  assert.notEqual(again.id, a.id);
  assert.deepEqual([again.priority, again.acknowledged, again.count], ['P1', false, 1]);
}

/** Acknowledge and close by the id a read answered: that episode only; an earlier episode's id acts on nothing. */
async function actsById(s: InProcessServer) {
  const alert = { message: 'queue stuck', alias: 'mq/orders', priority: 'P3' };
  const act = (identifier: string, action: 'close' | 'acknowledge') => s.post(`/v2/alerts/${encodeURIComponent(identifier)}/${action}`, { user: 'ann' });
  const key = `/v1/incidents/${encodeURIComponent(`og:${alert.alias}`)}`;
  await s.post('/v2/alerts', alert);
  const first = (await get(s, alert.alias, 'alias')).body.data.id as string;
  assert.equal((await act(first, 'acknowledge')).status, 202);
  assert.equal((await get(s, first)).body.data.acknowledged, true, 'acknowledged by its id (the default identifierType)');
  assert.equal((await act(first, 'close')).status, 202);
  assert.equal((await s.get(key)).status, 404, 'closed by its id');
  // The alias again, a moment later: a new alert, which the first id names no more.
  s.clock.advance(1000);
  await new Promise((r) => setTimeout(r, 5));
  await s.post('/v2/alerts', alert);
  const second = (await get(s, alert.alias, 'alias')).body.data.id as string;
  assert.notEqual(second, first);
  assert.equal((await act(first, 'acknowledge')).status, 202, 'answered as Opsgenie answers for a closed alert');
  assert.equal((await act(first, 'close')).status, 202);
  const open = await get(s, second);
  assert.deepEqual([open.status, open.body.data.acknowledged], [200, false], 'the old id neither acknowledged nor closed the new episode');
  // An identifier that is not an id onceonly answered, with the default type: 422 naming it, and nothing changes.
  const notId = await act(alert.alias, 'close');
  assert.equal(notId.status, 422);
  assert.deepEqual(Object.keys(notId.body.errors), ['identifier']);
  assert.equal((await get(s, second)).status, 200);
  assert.equal((await act(second, 'close')).status, 202);
  assert.equal((await s.get(key)).status, 404);
  const history = (await s.get(`${key}/history`)).body.events as Array<{ type: string; via?: string }>;
  assert.deepEqual(
    history.filter((e) => e.type === 'acknowledged' || e.type === 'closed').map((e) => [e.type, e.via]),
    [
      ['acknowledged', 'opsgenie'],
      ['closed', undefined],
      ['closed', undefined],
    ],
  );
}

test('Opsgenie GET /v2/alerts/{identifier}: an open alert by alias and by id, its acknowledgement, and nothing once closed; acknowledge and close by id (memory)', async () => {
  const s = await inProcessServer({ store: 'memory' });
  try {
    await readsAsOpsgenie(s);
    await actsById(s);
  } finally {
    await s.stop();
  }
});

test('the same on Redis, where the acknowledgement is read from its own marker', async () => {
  const redis = await startRedis();
  process.env.ONCEONLY_REDIS_ACCEPT_DATA_LOSS = '1';
  const s = await inProcessServer({ store: redis.url });
  try {
    await readsAsOpsgenie(s);
    await actsById(s);
  } finally {
    await s.stop();
    await redis.stop();
    delete process.env.ONCEONLY_REDIS_ACCEPT_DATA_LOSS;
  }
});

test("a read is the caller's tenant's: another tenant's alias or id finds nothing", async () => {
  const s = await inProcessServer({
    store: 'memory',
    config: 'tenants:\n  - { id: acme, tokens: [acme-token-0123456789abcdef] }\n  - { id: globex, tokens: [globex-token-0123456789abcdef] }\n',
  });
  try {
    const as = (token: string, method: 'GET' | 'POST', url: string, body?: unknown) =>
      s.app.inject({
        method,
        url,
        headers: { authorization: `GenieKey ${token}`, 'content-type': 'application/json' },
        payload: body === undefined ? undefined : JSON.stringify(body),
      });
    assert.equal((await as('acme-token-0123456789abcdef', 'POST', '/v2/alerts', { message: 'm', alias: 'shared-name' })).statusCode, 202);
    const mine = await as('acme-token-0123456789abcdef', 'GET', '/v2/alerts/shared-name?identifierType=alias');
    assert.equal(mine.statusCode, 200);
    const id = JSON.parse(mine.payload).data.id as string;
    assert.equal((await as('globex-token-0123456789abcdef', 'GET', '/v2/alerts/shared-name?identifierType=alias')).statusCode, 404);
    assert.equal((await as('globex-token-0123456789abcdef', 'GET', `/v2/alerts/${encodeURIComponent(id)}`)).statusCode, 404);
  } finally {
    await s.stop();
  }
});

test('any identifier and identifierType: a 404 or a 422 naming the parameter in Opsgenie’s shape, never a 5xx, nothing stored', async () => {
  const s = await inProcessServer({ store: 'memory' });
  try {
    await s.post('/v2/alerts', { message: 'm', alias: 'real' });
    const bad = [
      ['tiny', 'real'],
      ['ID', 'real'],
      ['id', 'real'],
      ['id', `zz.${Buffer.from('real').toString('base64')}=`],
      ['id', `1.${Buffer.from([0xff, 0xfe]).toString('base64url')}`],
      ['id', `1.${Buffer.from('a'.repeat(513)).toString('base64url')}`],
      ['alias', 'a'.repeat(513)],
      ['alias', ' '],
    ] as const;
    for (const [type, identifier] of bad) {
      const r = await get(s, identifier, type);
      assert.equal(r.status, 422, `${type} ${identifier.slice(0, 40)}: ${JSON.stringify(r.body)}`);
      assert.equal(r.body.message, 'Request body is not processable. Please check the errors.');
      assert.ok(
        Object.keys(r.body.errors).every((k) => k === 'identifier' || k === 'identifierType'),
        JSON.stringify(r.body.errors),
      );
    }
    await fc.assert(
      fc.asyncProperty(
        fc.string({ minLength: 1, maxLength: 600, unit: 'grapheme' }),
        fc.constantFrom(undefined, 'id', 'alias', 'tiny', 'x'),
        async (identifier, type) => {
          const r = await get(s, identifier, type);
          assert.ok([404, 422].includes(r.status) || (r.status === 200 && r.body.data.alias === 'real'), `${r.status} ${JSON.stringify(r.body).slice(0, 200)}`);
          assert.equal(typeof r.body.requestId, 'string');
        },
      ),
      { seed: testSeed('opsgenie-get-alert'), numRuns: 300 },
    );
    assert.equal((await s.get('/v1/incidents')).body.incidents.length, 1, 'reads stored nothing');
  } finally {
    await s.stop();
  }
});

test('by tiny id: a read answers one, and a read, note, acknowledge and close by it act on that episode only', async () => {
  const s = await inProcessServer({ store: 'memory' });
  try {
    await s.post('/v2/alerts', { message: 'disk full', alias: 'db1-disk' });
    const a = (await get(s, 'db1-disk', 'alias')).body.data;
    assert.match(a.tinyId, /^(0|[1-9][0-9]{0,7})$/);
    assert.deepEqual((await get(s, a.tinyId, 'tiny')).body.data, a);
    assert.equal((await s.post(`/v2/alerts/${a.tinyId}/notes?identifierType=tiny`, { note: 'looking' })).status, 202);
    assert.deepEqual(
      (await s.get(`/v2/alerts/${a.tinyId}/notes?identifierType=tiny`)).body.data.map((n: { note: string }) => n.note),
      ['looking'],
    );
    assert.equal(
      (await s.app.inject({ method: 'PUT', url: `/v2/alerts/${a.tinyId}/priority?identifierType=tiny`, payload: { priority: 'P1' } })).statusCode,
      202,
    );
    assert.equal((await get(s, a.tinyId, 'tiny')).body.data.priority, 'P1', 'an edit by tiny id');
    assert.equal((await s.post(`/v2/alerts/${a.tinyId}/acknowledge?identifierType=tiny`, {})).status, 202);
    assert.equal((await get(s, a.id)).body.data.acknowledged, true);
    assert.equal((await s.post(`/v2/alerts/${a.tinyId}/close?identifierType=tiny`, {})).status, 202);
    assert.equal((await get(s, 'db1-disk', 'alias')).status, 404, 'closed by its tiny id');
    // The next episode has an id and a tiny id of its own: the old tiny id closes nothing of it.
    s.clock.advance(1000);
    await s.post('/v2/alerts', { message: 'disk full again', alias: 'db1-disk' });
    const again = (await get(s, 'db1-disk', 'alias')).body.data;
    assert.notEqual(again.tinyId, a.tinyId);
    assert.equal((await get(s, a.tinyId, 'tiny')).status, 404);
    assert.equal((await s.post(`/v2/alerts/${a.tinyId}/close?identifierType=tiny`, {})).status, 202);
    assert.equal((await get(s, 'db1-disk', 'alias')).status, 200, 'the old tiny id closed nothing');
  } finally {
    await s.stop();
  }
});

test('a tiny id two open alerts share, or one not found past the first 1,000 open alerts, is refused and changes nothing', async () => {
  const s = await inProcessServer({ store: 'memory' });
  try {
    // The memory store's episode starts on the test's clock, so two aliases whose tiny ids meet can be found beforehand.
    const at = s.clock.now();
    const seen = new Map<string, string>();
    let pair: [string, string] | null = null;
    for (let i = 0; !pair; i++) {
      const alias = `svc-${i}`;
      const tiny = ogTinyId(alias, at);
      const other = seen.get(tiny);
      if (other) pair = [other, alias];
      seen.set(tiny, alias);
    }
    for (const alias of pair) await s.post('/v2/alerts', { message: 'm', alias });
    const tiny = ogTinyId(pair[0], at);
    const before = (await s.get('/v1/incidents')).body.incidents.length;
    for (const action of ['close', 'acknowledge'] as const) {
      const r = await s.post(`/v2/alerts/${tiny}/${action}?identifierType=tiny`, {});
      assert.equal(r.status, 422, action);
      assert.match(r.body.errors.identifier, /2 open alerts share the tiny id/);
    }
    assert.equal((await get(s, tiny, 'tiny')).status, 422);
    assert.equal((await s.get('/v1/incidents')).body.incidents.length, before, 'nothing closed');
    for (const alias of pair) assert.equal((await get(s, alias, 'alias')).body.data.acknowledged, false, 'nothing acknowledged');

    // 1,000 open alerts: a tiny id none of them has may belong to one past them, so it is refused, not answered 202.
    const batch = Array.from({ length: 1000 }, (_, i) =>
      JSON.stringify({ element_id: `olt-${i}`, fault_class: 'LOS', root_cause_id: 'c', severity: 'MAJOR' }),
    ).join('\n');
    assert.equal(
      (await s.app.inject({ method: 'POST', url: '/v1/incidents', headers: { 'content-type': 'application/x-ndjson' }, payload: batch })).statusCode,
      200,
    );
    const absent = [...Array(100).keys()].map(String).find((t) => !seen.has(t))!;
    const r = await s.post(`/v2/alerts/${absent}/close?identifierType=tiny`, {});
    assert.equal(r.status, 422);
    assert.match(r.body.errors.identifier, /among the first 1000 open ones/);
  } finally {
    await s.stop();
  }
});
