import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { REQUEST_MEMORY_MS } from '../../src/store/contract/index.js';
import type { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { NDJSON } from '../../src/http/batch.js';
import { inProcessServer, type InProcessServer } from '../helpers/server.js';

const A = 'idem-token-acme-00000001';
const B = 'idem-token-beta-00000002';
const incident = (i: number, severity = 'MAJOR') => ({ element_id: `olt-${i}`, fault_class: 'LOS', root_cause_id: 'cut', severity });

describe('Idempotency-Key on POST', () => {
  let s: InProcessServer;
  before(async () => {
    s = await inProcessServer({
      store: 'sqlite',
      config: `tenants:\n  - { id: acme, tokens: [${A}], rate_limit: { per_second: 1, burst: 20 } }\n  - { id: beta, tokens: [${B}], rate_limit: { per_second: 1000, burst: 100000 } }\n`,
    });
  });
  after(() => s.stop());
  const post = (url: string, body: unknown, key?: string, token = B, type = 'application/json') =>
    s.app.inject({
      method: 'POST',
      url,
      headers: { authorization: `Bearer ${token}`, 'content-type': type, ...(key === undefined ? {} : { 'idempotency-key': key }) },
      payload: typeof body === 'string' ? body : JSON.stringify(body),
    });
  const record = async (key: string, token = B) =>
    JSON.parse((await s.app.inject({ method: 'GET', url: `/v1/incidents/${key}`, headers: { authorization: `Bearer ${token}` } })).payload);

  test('a retried CREATE answers CREATE again, marked replayed, and is decided once', async () => {
    const first = await post('/v1/incidents', incident(1), 'retry-1');
    assert.equal(first.statusCode, 200);
    assert.equal(JSON.parse(first.payload).decision, 'CREATE');
    assert.equal(first.headers['idempotent-replayed'], undefined);
    const again = await post('/v1/incidents', incident(1), 'retry-1');
    assert.equal(again.statusCode, 200);
    assert.equal(again.headers['idempotent-replayed'], 'true');
    assert.deepEqual(JSON.parse(again.payload), JSON.parse(first.payload), 'the first answer, not a SUPPRESS');
    assert.equal((await record(JSON.parse(first.payload).dedup_key)).refires, 0, 'the retry was not decided again');
    // Without a key the same body is decided again, as before.
    assert.equal(JSON.parse((await post('/v1/incidents', incident(1))).payload).decision, 'SUPPRESS');
  });

  test('the same key with another body, route or path is 422 and changes nothing', async () => {
    assert.equal((await post('/v1/incidents', incident(2), 'reuse-1')).statusCode, 200);
    const other = await post('/v1/incidents', incident(2, 'CRITICAL'), 'reuse-1');
    assert.equal(other.statusCode, 422);
    assert.equal(JSON.parse(other.payload).error.code, 'idempotency_key_reused');
    const key = JSON.parse((await post('/v1/incidents', incident(2), 'reuse-1')).payload).dedup_key;
    assert.equal((await record(key)).severity, 'MAJOR', 'the second body was not decided');
    const route = await post(
      '/v1/violations',
      { process_id: 'p', rule_id: 'nelson_1', timestamp: 1770000000, value: 13, center: 10, ucl: 12, lcl: 8 },
      'reuse-1',
    );
    assert.equal(route.statusCode, 422);
  });

  test('two concurrent requests with one key: one runs, the other is 409 while it does', async () => {
    const lines = `${Array.from({ length: 3000 }, (_, i) => JSON.stringify(incident(10_000 + i))).join('\n')}\n`;
    const [x, y] = await Promise.all([post('/v1/incidents', lines, 'batch-1', B, NDJSON), post('/v1/incidents', lines, 'batch-1', B, NDJSON)]);
    assert.deepEqual([x.statusCode, y.statusCode].sort(), [200, 409]);
    const busy = x.statusCode === 409 ? x : y;
    assert.equal(JSON.parse(busy.payload).error.code, 'idempotency_in_flight');
    assert.ok(Number(busy.headers['retry-after']) >= 1);
    const ran = x.statusCode === 200 ? x : y;
    assert.equal(
      ran.payload
        .trimEnd()
        .split('\n')
        .filter((l) => JSON.parse(l).decision === 'CREATE').length,
      3000,
    );
    // Once it has answered, the repeat is its answer, replayed.
    const later = await post('/v1/incidents', lines, 'batch-1', B, NDJSON);
    assert.equal(later.headers['idempotent-replayed'], 'true');
    assert.equal(later.payload, ran.payload);
    assert.match(String(later.headers['content-type']), /^application\/x-ndjson/);
  });

  test("keys are per tenant: another tenant's same key runs its own request", async () => {
    const mine = await post('/v1/incidents', incident(3), 'shared-key', B);
    const theirs = await post('/v1/incidents', incident(3), 'shared-key', A);
    assert.equal(theirs.headers['idempotent-replayed'], undefined);
    assert.equal(JSON.parse(theirs.payload).decision, 'CREATE');
    assert.equal(JSON.parse(mine.payload).decision, 'CREATE');
  });

  test('a refusal lists at most 100 issues, so the answer kept for a key is smaller than the request that made it', async () => {
    const alerts = Array.from({ length: 1000 }, (_, i) => ({
      status: 'firing',
      labels: { alertname: `a${i}` },
      annotations: {},
      startsAt: 'not a time',
      endsAt: 'not a time',
      fingerprint: 'not hex!',
    }));
    const body = { version: '4', status: 'firing', alerts };
    const first = await post('/v1/alertmanager', body, 'many-issues-1');
    assert.equal(first.statusCode, 400);
    const issues = JSON.parse(first.payload).error.issues as Array<{ path: string; message: string }>;
    assert.equal(issues.length, 100);
    assert.match(issues[99]!.message, /^alerts after alerts\.\d+ were not checked: a refusal lists at most 100 issues$/);
    assert.ok(first.payload.length < JSON.stringify(body).length, `answer ${first.payload.length} bytes, request ${JSON.stringify(body).length}`);
    const again = await post('/v1/alertmanager', body, 'many-issues-1');
    assert.deepEqual([again.statusCode, again.headers['idempotent-replayed'], again.payload], [400, 'true', first.payload], 'kept whole and replayed');
  });

  test('a key that is not 1..255 printable ASCII is 400 and nothing is decided', async () => {
    for (const bad of ['', 'x'.repeat(256), 'ключ', 'a\tb']) {
      const r = await post('/v1/incidents', incident(4), bad);
      assert.equal(r.statusCode, 400, JSON.stringify(bad));
      assert.match(JSON.parse(r.payload).error.message, /Idempotency-Key/);
    }
    assert.equal(JSON.parse((await post('/v1/incidents', incident(4))).payload).decision, 'CREATE', 'the refused ones decided nothing');
  });

  test('an answer that says "later" (503, 429) is not kept: the retry runs', async () => {
    // The file cannot be written: 503 (the key cannot even be recorded, so nothing holds it).
    const db = (s.store as SqliteStore).database;
    db.pragma('query_only = ON');
    const down = await post('/v1/incidents', incident(5), 'later-1');
    db.pragma('query_only = OFF');
    assert.equal(down.statusCode, 503);
    const up = await post('/v1/incidents', incident(5), 'later-1');
    assert.equal(up.statusCode, 200);
    assert.equal(up.headers['idempotent-replayed'], undefined);
    assert.equal(JSON.parse(up.payload).decision, 'CREATE');
    // acme may send 20 at once, 1 a second: a batch past what is left is 429 after its key was recorded;
    // the key is freed, and the retry runs once tokens are back.
    const batch = (n: number) => `${Array.from({ length: n }, (_, i) => JSON.stringify(incident(20_000 + i))).join('\n')}\n`;
    assert.equal((await post('/v1/incidents', batch(15), 'spend', A, NDJSON)).statusCode, 200);
    const limited = await post('/v1/incidents', batch(15).replaceAll('olt-2', 'olt-3'), 'limited', A, NDJSON);
    assert.equal(limited.statusCode, 429);
    s.clock.advance(30_000);
    const retried = await post('/v1/incidents', batch(15).replaceAll('olt-2', 'olt-3'), 'limited', A, NDJSON);
    assert.equal(retried.statusCode, 200);
    assert.equal(retried.headers['idempotent-replayed'], undefined);
  });

  test('an answer is kept 24 hours, then the key is free', async () => {
    assert.equal((await post('/v1/incidents', incident(6), 'day-1')).statusCode, 200);
    s.clock.advance(REQUEST_MEMORY_MS - 60_000);
    assert.equal((await post('/v1/incidents', incident(6), 'day-1')).headers['idempotent-replayed'], 'true');
    s.clock.advance(120_000);
    const fresh = await post('/v1/incidents', incident(6), 'day-1');
    assert.equal(fresh.headers['idempotent-replayed'], undefined, 'forgotten after 24 h: decided again');
  });
});
