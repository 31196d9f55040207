import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { inProcessServer, type InProcessServer } from '../helpers/server.js';

/**
 * Invalid UTF-8 is refused, not repaired: decoding would turn every invalid
 * byte into U+FFFD, so `olt-\xff` and `olt-\xfe` would be one incident and
 * the second fault suppressed. A body (single or batch) that is not UTF-8
 * answers 400 and stores nothing.
 */
let s: InProcessServer;
before(async () => {
  s = await inProcessServer({ store: 'memory' });
});
after(() => s?.stop());

const body = (byte: number) =>
  Buffer.concat([Buffer.from('{"element_id":"olt-'), Buffer.from([byte]), Buffer.from('","fault_class":"LOS","root_cause_id":"cut","severity":"MAJOR"}')]);

test('a JSON body with invalid UTF-8 answers 400 and creates nothing; two such bytes never share a key', async () => {
  for (const byte of [0xff, 0xfe, 0xc3]) {
    const r = await s.app.inject({ method: 'POST', url: '/v1/incidents', payload: body(byte), headers: { 'content-type': 'application/json' } });
    assert.equal(r.statusCode, 400, r.payload);
    assert.equal(JSON.parse(r.payload).error.code, 'invalid_input');
    assert.match(JSON.parse(r.payload).error.message, /UTF-8/);
  }
  const batch = Buffer.concat([body(0x41), Buffer.from('\n'), body(0xff), Buffer.from('\n')]);
  const b = await s.app.inject({ method: 'POST', url: '/v1/incidents', payload: batch, headers: { 'content-type': 'application/x-ndjson' } });
  assert.equal(b.statusCode, 400, b.payload);
  assert.match(JSON.parse(b.payload).error.message, /UTF-8/);
  assert.deepEqual((await s.get('/v1/incidents')).body.incidents, [], 'nothing was created');
  // Valid UTF-8 (a real é, two bytes) is taken as it is.
  const ok = await s.app.inject({
    method: 'POST',
    url: '/v1/incidents',
    payload: body(0x41).toString().replace('olt-A', 'olt-é'),
    headers: { 'content-type': 'application/json' },
  });
  assert.equal(ok.statusCode, 200, ok.payload);
  // fastify's own checks still hold: an empty body and a prototype-poisoning key are refused.
  const empty = await s.app.inject({ method: 'POST', url: '/v1/incidents', payload: '', headers: { 'content-type': 'application/json' } });
  assert.equal(empty.statusCode, 400);
  const poisoned = await s.app.inject({
    method: 'POST',
    url: '/v1/incidents',
    payload: '{"__proto__":{"x":1}}',
    headers: { 'content-type': 'application/json' },
  });
  assert.equal(poisoned.statusCode, 400);
});
