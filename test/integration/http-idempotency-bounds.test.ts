import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { NDJSON } from '../../src/http/batch.js';
import { inProcessServer, type InProcessServer } from '../helpers/server.js';

const T = { count: 'bound-token-count-00000001', digest: 'bound-token-digest-0000002', bytes: 'bound-token-bytes-00000003' };
const incident = (i: number) => ({ element_id: `olt-${i}`, fault_class: 'LOS', root_cause_id: 'cut', severity: 'MAJOR' });
const batch = (from: number, n: number) => `${Array.from({ length: n }, (_, i) => JSON.stringify(incident(from + i))).join('\n')}\n`;

// A tenant's kept Idempotency-Key answers are bounded by count and bytes:
// what a producer (or an attacker with a token) sends cannot grow the store.
describe('Idempotency-Key bounds per tenant', () => {
  let s: InProcessServer;
  before(async () => {
    s = await inProcessServer({
      store: 'sqlite',
      config:
        'limits: { idempotency_keys_per_tenant: 3, idempotency_answer_bytes: 400, idempotency_bytes_per_tenant: 1024 }\ntenants:\n' +
        Object.entries(T)
          .map(([id, token]) => `  - { id: ${id}, tokens: [${token}], rate_limit: { per_second: 1000, burst: 100000 } }\n`)
          .join(''),
    });
  });
  after(() => s.stop());
  const post = (body: unknown, key: string | undefined, token: string, type = 'application/json', url = '/v1/incidents') =>
    s.app.inject({
      method: 'POST',
      url,
      headers: { authorization: `Bearer ${token}`, 'content-type': type, ...(key === undefined ? {} : { 'idempotency-key': key }) },
      payload: typeof body === 'string' ? body : JSON.stringify(body),
    });
  const decided = async (i: number, token: string) => {
    const id = JSON.parse((await post(incident(i), undefined, token)).payload) as { decision: string };
    return id.decision;
  };

  test('a new key past the count is 429 with Retry-After and decides nothing; held keys replay, keyless posts and other tenants go on', async () => {
    for (let i = 0; i < 3; i++) assert.equal((await post(incident(i), `k-${i}`, T.count)).statusCode, 200);
    const refused = await post(incident(3), 'k-3', T.count);
    assert.equal(refused.statusCode, 429);
    assert.equal(refused.headers['retry-after'], '60');
    const body = JSON.parse(refused.payload) as { error: { code: string; message: string } };
    assert.equal(body.error.code, 'rate_limited');
    assert.match(body.error.message, /limits\.idempotency_keys_per_tenant/);
    assert.equal(await decided(3, T.count), 'CREATE', 'the refused post decided nothing');
    assert.equal((await post(incident(1), 'k-1', T.count)).headers['idempotent-replayed'], 'true', 'a held key still replays');
    assert.equal((await post(incident(4), 'k-4', T.bytes)).statusCode, 200, 'another tenant has its own bound');
    s.clock.advance(24 * 3_600_000 + 1);
    await s.store.sweepExpired();
    assert.equal((await post(incident(5), 'k-5', T.count)).statusCode, 200, 'after 24 h the keys are free again');
  });

  test('an answer longer than one answer may be is kept as its status and SHA-256; the replay says so and nothing is decided twice', async () => {
    const first = await post(batch(100, 6), 'big-1', T.digest, NDJSON);
    assert.equal(first.statusCode, 200);
    assert.ok(Buffer.byteLength(first.payload) > 400, `the answer is ${Buffer.byteLength(first.payload)} bytes`);
    const again = await post(batch(100, 6), 'big-1', T.digest, NDJSON);
    assert.equal(again.statusCode, 200);
    assert.equal(again.headers['idempotent-replayed'], 'true');
    const kept = JSON.parse(again.payload) as { replayed: { bytes: number; sha256: string }; message: string };
    assert.deepEqual(kept.replayed, { bytes: Buffer.byteLength(first.payload), sha256: createHash('sha256').update(first.payload).digest('hex') });
    assert.match(kept.message, /larger than/);
    assert.equal(await decided(100, T.digest), 'SUPPRESS', 'decided once, by the first post');
    // A refusal too large to keep replays its status and code.
    const bad = {
      version: '4',
      status: 'firing',
      alerts: Array.from({ length: 30 }, (_, i) => ({ status: 'firing', labels: { alertname: `a${i}` }, startsAt: 'never' })),
    };
    const refused = await post(bad, 'bad-1', T.digest, 'application/json', '/v1/alertmanager');
    assert.equal(refused.statusCode, 400);
    assert.ok(Buffer.byteLength(refused.payload) > 400);
    const replay = await post(bad, 'bad-1', T.digest, 'application/json', '/v1/alertmanager');
    assert.equal(replay.statusCode, 400);
    assert.equal((JSON.parse(replay.payload) as { error: { code: string } }).error.code, 'invalid_input');
    assert.equal(replay.headers['idempotent-replayed'], 'true');
  });

  test("answers that would pass the tenant's bytes are kept as digests, so its kept bytes stay within the bound", async () => {
    const answers: string[] = [];
    for (let i = 0; i < 3; i++) {
      const r = await post(batch(200 + i * 10, 3), `b-${i}`, T.bytes, NDJSON);
      assert.equal(r.statusCode, 200);
      answers.push(r.payload);
    }
    const sizes = answers.map((a) => Buffer.byteLength(a));
    assert.ok(
      sizes.every((n) => n <= 400) && sizes[0]! + sizes[1]! <= 1024 && sizes[0]! + sizes[1]! + sizes[2]! > 1024,
      `answers of ${sizes.join(', ')} bytes`,
    );
    const replays = await Promise.all([0, 1, 2].map((i) => post(batch(200 + i * 10, 3), `b-${i}`, T.bytes, NDJSON)));
    const whole = replays.filter((r, i) => r.payload === answers[i]).length;
    const digests = replays.filter((r) => 'replayed' in (JSON.parse(r.payload.split('\n')[0]!) as object)).length;
    assert.deepEqual([whole, digests], [2, 1], 'the first two kept whole, the third as its digest');
    const keptBytes = (s.store as unknown as { database: { prepare(q: string): { get(t: string): { n_bytes: number } } } }).database
      .prepare('SELECT n_bytes FROM request_quota WHERE tenant = ?')
      .get('bytes').n_bytes;
    assert.ok(keptBytes <= 1024, `the tenant keeps ${keptBytes} bytes`);
  });
});
