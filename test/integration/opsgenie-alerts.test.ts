import { test } from 'node:test';
import assert from 'node:assert/strict';
import { inProcessServer, type InProcessServer } from '../helpers/server.js';

const key = (alias: string) => `/v1/incidents/${encodeURIComponent(`og:${alias}`)}`;
const decisions = async (s: InProcessServer, alias: string) =>
  ((await s.get(`${key(alias)}/history`)).body.events as Array<{ type: string; decision?: string; count?: number }>).map((e) =>
    e.type === 'decision' ? `${e.decision}${e.count && e.count > 1 ? `×${e.count}` : ''}` : e.type,
  );

test('an alias is one incident: create, repeat, a new priority, acknowledge, close, and a new episode', async () => {
  const s = await inProcessServer({ store: 'memory' });
  try {
    const alert = { message: 'disk full on db1', alias: 'db1/disk', priority: 'P2', source: 'nagios' };
    const first = await s.post('/v2/alerts', alert);
    assert.equal(first.status, 202);
    assert.equal(first.body.result, 'Request will be processed');
    assert.equal(typeof first.body.took, 'number');
    assert.equal(typeof first.body.requestId, 'string');
    await s.post('/v2/alerts', alert);
    await s.post('/v2/alerts', alert);
    const shown = (await s.get(key('db1/disk'))).body;
    assert.equal(shown.severity, 'MAJOR', 'P2 is MAJOR');
    assert.equal(shown.summary, 'disk full on db1');
    assert.equal(shown.refires, 2);
    assert.equal((await s.post('/v2/alerts', { ...alert, priority: 'P1' })).status, 202);
    assert.equal((await s.get(key('db1/disk'))).body.severity, 'CRITICAL');
    assert.equal((await s.post('/v2/alerts/db1%2Fdisk/acknowledge?identifierType=alias', { source: 'ops' })).status, 202);
    assert.equal((await s.post('/v2/alerts/db1%2Fdisk/close?identifierType=alias', { source: 'ops' })).status, 202);
    assert.equal((await s.get(key('db1/disk'))).status, 404, 'closed');
    assert.deepEqual(await decisions(s, 'db1/disk'), ['CREATE', 'SUPPRESS×2', 'UPDATE', 'acknowledged', 'closed']);
    // Closing what is not open is answered as Opsgenie answers it (the request is taken), and changes nothing.
    assert.equal((await s.post('/v2/alerts/db1%2Fdisk/close?identifierType=alias', {})).status, 202);
    assert.equal((await s.post('/v2/alerts', alert)).status, 202);
    assert.equal((await s.get(key('db1/disk'))).body.refires, 0, 'after a close the alias opens a new incident');
    assert.deepEqual((await decisions(s, 'db1/disk')).slice(-1), ['CREATE']);
  } finally {
    await s.stop();
  }
});

test("an alert's fields: the message is cut to 130 characters and is the alias when none is given; details, tags, entity, source and responders are its labels", async () => {
  const s = await inProcessServer({ store: 'memory' });
  try {
    const long = `${'x'.repeat(129)}é and more`;
    assert.equal((await s.post('/v2/alerts', { message: long })).status, 202);
    // The alias is the message as cut, so a key stays bounded however long a message comes.
    const byMessage = (await s.get(key(`${'x'.repeat(129)}é`))).body;
    assert.equal(byMessage.summary, `${'x'.repeat(129)}é`, 'cut to 130 characters, as Opsgenie does');
    assert.equal(byMessage.severity, 'MINOR', 'P3 by default');
    assert.equal((await s.post('/v2/alerts', { message: 'y'.repeat(100_000) })).status, 202);
    assert.equal((await s.get(key('y'.repeat(130)))).status, 200, 'a 100,000-character message is the alias of its first 130');

    await s.post('/v2/alerts', {
      message: 'link down',
      alias: 'olt-7',
      priority: 'P5',
      tags: ['network', 'olt', 'network'],
      details: { 'Server Name': 'olt-7', '9lives': 'yes', team: 'net' },
      entity: 'olt-7',
      source: 'zabbix',
      responders: [{ type: 'team', name: 'net' }],
      note: 'ignored',
    });
    const shown = (await s.get(key('olt-7'))).body;
    assert.equal(shown.severity, 'INFO');
    assert.deepEqual(shown.labels, {
      Server_Name: 'olt-7',
      _9lives: 'yes',
      team: 'net',
      priority: 'P5',
      tags: 'network,olt',
      entity: 'olt-7',
      source: 'zabbix',
      responders: 'team:net',
    });
  } finally {
    await s.stop();
  }
});

test('what Opsgenie refuses is refused in its shape, naming each field, and stores nothing', async () => {
  const s = await inProcessServer({ store: 'memory' });
  try {
    const cases: Array<[unknown, string[]]> = [
      [{}, ['message']],
      [{ message: '   ' }, ['message']],
      [{ message: 7 }, ['message']],
      [{ message: 'm', priority: 'P9' }, ['priority']],
      [{ message: 'm', alias: 'a'.repeat(513) }, ['alias']],
      [{ message: 'm', alias: '' }, ['alias']],
      [{ message: 'm\u0000' }, ['message']],
      [{ message: 'm', tags: 'a,b' }, ['tags']],
      [{ message: 'm', tags: Array.from({ length: 21 }, (_, i) => `t${i}`) }, ['tags']],
      [{ message: 'm', tags: ['x'.repeat(51)] }, ['tags']],
      [{ message: 'm', details: { a: 1 } }, ['details']],
      [{ message: 'm', details: Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`d${i}`, 'v'])) }, ['details']],
      // A detail may not stand for the alert's own fields or onceonly's, nor two details make one label.
      ...['alias', 'kind', 'dedup_key', 'priority', 'source', 'tenant', 'oo-severity'].map(
        (name) => [{ message: 'm', details: { [name]: 'x' } }, ['details']] as [unknown, string[]],
      ),
      [{ message: 'm', details: { 'Server Name': 'a', Server_Name: 'b' } }, ['details']],
      [{ message: 'm', entity: 'e'.repeat(513), source: 's'.repeat(101) }, ['entity', 'source']],
      [[{ message: 'm' }], ['body']],
    ];
    for (const [body, fields] of cases) {
      const r = await s.post('/v2/alerts', body);
      assert.equal(r.status, 422, `${JSON.stringify(body).slice(0, 80)}: ${JSON.stringify(r.body)}`);
      assert.equal(r.body.message, 'Request body is not processable. Please check the errors.');
      assert.deepEqual(Object.keys(r.body.errors).sort(), fields, JSON.stringify(r.body.errors));
      assert.ok(Object.values(r.body.errors as Record<string, string>).every((m) => m.length > 0));
      assert.equal(typeof r.body.requestId, 'string');
    }
    // By id (the default type), only an id a read answered; a tiny id is a number.
    for (const url of ['/v2/alerts/a/close', '/v2/alerts/a/close?identifierType=id']) {
      const r = await s.post(url, {});
      assert.equal(r.status, 422, url);
      assert.match(r.body.errors.identifier, /not an alert id onceonly answered/);
    }
    const tiny = await s.post('/v2/alerts/a/acknowledge?identifierType=tiny', {});
    assert.equal(tiny.status, 422);
    assert.match(tiny.body.errors.identifier, /tiny id is a number of at most 8 digits/);
    const other = await s.post('/v2/alerts/a/acknowledge?identifierType=x', {});
    assert.equal(other.status, 422);
    assert.match(other.body.errors.identifierType, /identifierType must be id, tiny or alias/);
    const tooLong = await s.post(`/v2/alerts/${'a'.repeat(513)}/close?identifierType=alias`, {});
    assert.equal(tooLong.status, 422);
    assert.match(tooLong.body.errors.identifier, /at most 512 characters/);
    const broken = await s.app.inject({ method: 'POST', url: '/v2/alerts', headers: { 'content-type': 'application/json' }, payload: '{"message":' });
    assert.equal(broken.statusCode, 400);
    assert.equal(JSON.parse(broken.body).message, 'Could not parse request body, please check your JSON.');
    assert.deepEqual((await s.get('/v1/incidents')).body, { incidents: [] }, 'nothing was stored');
  } finally {
    await s.stop();
  }
});

test('with tenants, GenieKey (or Bearer) is the tenant token; a wrong key is refused as Opsgenie refuses it', async () => {
  const token = 'opsgenie-tenant-token-0123456789';
  const s = await inProcessServer({ store: 'memory', config: `tenants:\n  - { id: acme, tokens: [${token}] }\n` });
  try {
    const post = (authorization: string | undefined, url = '/v2/alerts', body: unknown = { message: 'm', alias: 'a1' }) =>
      s.app.inject({
        method: 'POST',
        url,
        payload: body as object,
        headers: { 'content-type': 'application/json', ...(authorization ? { authorization } : {}) },
      });
    for (const auth of [undefined, 'GenieKey wrong-key-0123456789abcdef']) {
      const r = await post(auth);
      assert.equal(r.statusCode, 401);
      assert.equal(JSON.parse(r.body).message, 'Could not authenticate');
    }
    assert.equal((await post(`GenieKey ${token}`)).statusCode, 202);
    assert.equal((await post(`Bearer ${token}`)).statusCode, 202);
    assert.equal((await post(`GenieKey ${token}`, '/v2/alerts/a1/close?identifierType=alias', {})).statusCode, 202);
    const list = await s.app.inject({ method: 'GET', url: '/v1/incidents', headers: { authorization: `Bearer ${token}` } });
    assert.deepEqual(JSON.parse(list.body), { incidents: [] }, "the tenant's alert was made, repeated and closed");
    // GenieKey is a credential on the Opsgenie routes only: the same key opens nothing else.
    for (const [method, url] of [
      ['GET', '/v1/incidents'],
      ['POST', '/v1/incidents'],
      ['GET', '/v1/dead-letters'],
    ] as const) {
      const r = await s.app.inject({ method, url, headers: { authorization: `GenieKey ${token}` }, ...(method === 'POST' ? { payload: {} } : {}) });
      assert.equal(r.statusCode, 401, `${method} ${url} with GenieKey`);
    }
    const history = await s.app.inject({ method: 'GET', url: `${key('a1')}/history`, headers: { authorization: `Bearer ${token}` } });
    assert.deepEqual(
      (JSON.parse(history.body).events as Array<{ type: string; decision?: string }>).map((e) => e.decision ?? e.type),
      ['CREATE', 'SUPPRESS', 'closed'],
    );
  } finally {
    await s.stop();
  }
});
