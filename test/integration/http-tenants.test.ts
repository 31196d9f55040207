import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { inProcessServer, type InProcessServer } from '../helpers/server.js';
import { until } from '../helpers/wait.js';
import { testSeed } from '../helpers/seed.js';

const A = 'token-of-tenant-acme-0001';
const B = 'token-of-tenant-beta-0002';
const C = 'token-of-tenant-slow-0003';

describe('HTTP: tenants and access', () => {
  let s: InProcessServer;
  const as = (token: string | null) => async (method: 'GET' | 'POST' | 'DELETE', url: string, body?: unknown) => {
    const res = await s.app.inject({
      method,
      url,
      headers: token === null ? {} : { authorization: `Bearer ${token}` },
      ...(body === undefined ? {} : { payload: body as object }),
    });
    const json = String(res.headers['content-type'] ?? '').includes('json');
    return { status: res.statusCode, body: res.payload && json ? JSON.parse(res.payload) : res.payload, headers: res.headers };
  };
  const acme = as(A);
  const beta = as(B);
  const incident = { element_id: 'olt-1', fault_class: 'LOS', root_cause_id: 'cut', severity: 'MAJOR' };
  const ev = (tenant: string, seq: number, state = 'IDLE') => ({
    tenant_id: tenant,
    device_id: 'pos-1',
    boot_id: 'b1',
    sequence: seq,
    state,
    observed_at: '2026-11-30T12:00:00Z',
  });
  let key: string;
  let deadId: string;

  before(async () => {
    s = await inProcessServer({
      config: `
tenants:
  - { id: acme, tokens: [${A}] }
  - { id: beta, tokens: [${B}], rate_limit: { per_second: 1000, burst: 100000 } }
  - { id: slow, tokens: [${C}], rate_limit: { per_second: 1, burst: 2 } }
delivery: { max_retries: 0 }
adapters: [ { name: hook, type: webhook, url: "http://127.0.0.1:9/nobody", timeout_ms: 1000 } ]
`,
    });
    key = (await acme('POST', '/v1/incidents', incident)).body.dedup_key;
    assert.equal((await acme('POST', '/v1/events', ev('acme', 1))).body.outcome, 'applied');
    // acme's create cannot be delivered (nobody listens): it becomes acme's dead letter.
    deadId = await until(async () => (await acme('GET', '/v1/dead-letters')).body.dead_letters[0]?.id, 10_000);
  });
  after(() => s.stop());

  test('no token or a wrong one: 401 with WWW-Authenticate; probes and metrics stay open', async () => {
    for (const [token, msg] of [
      [null, /needs Authorization: Bearer/],
      ['not-a-real-token-at-all', /not valid/],
      [`${A.slice(0, -1)}X`, /not valid/],
    ] as const) {
      const r = await as(token)('POST', '/v1/incidents', incident);
      assert.equal(r.status, 401);
      assert.equal(r.body.error.code, 'unauthorized');
      assert.match(r.body.error.message, msg);
      assert.equal(r.headers['www-authenticate'], 'Bearer');
    }
    const basic = await s.app.inject({
      method: 'GET',
      url: `/v1/incidents/${key}`,
      headers: { authorization: `Basic ${Buffer.from(`x:${A}`).toString('base64')}` },
    });
    assert.equal(basic.statusCode, 401, 'only Bearer');
    for (const url of ['/healthz', '/metrics']) assert.equal((await as(null)('GET', url)).status, 200, url);
    assert.equal((await acme('GET', `/v1/incidents/${key}`)).status, 200, 'nothing of the refused calls changed it');
    assert.equal((await acme('GET', `/v1/incidents/${key}`)).body.refires, 0);
  });

  test("one tenant's key is another's 404, and the same fault under two tenants is two incidents", async () => {
    assert.equal((await beta('GET', `/v1/incidents/${key}`)).status, 404);
    assert.equal((await beta('DELETE', `/v1/incidents/${key}`)).status, 404);
    assert.equal((await acme('GET', `/v1/incidents/${key}`)).status, 200, 'still live for its owner');
    const theirs = await beta('POST', '/v1/incidents', incident);
    assert.deepEqual([theirs.body.decision, theirs.body.dedup_key], ['CREATE', key], 'same key, separate incident');
  });

  test("events: another tenant's tenant_id is 403 and changes nothing; devices and stats are per tenant", async () => {
    const before = (await acme('GET', '/v1/stats')).body;
    const r = await acme('POST', '/v1/events', ev('beta', 5, 'BUSY'));
    assert.equal(r.status, 403);
    assert.equal(r.body.error.code, 'forbidden');
    assert.equal((await beta('GET', '/v1/devices/beta/pos-1')).status, 404, 'nothing was applied for beta');
    assert.equal((await beta('GET', '/v1/devices/acme/pos-1')).status, 404, "acme's device is not beta's to see");
    assert.equal((await acme('GET', '/v1/devices/acme/pos-1')).body.state, 'IDLE');
    const after = (await acme('GET', '/v1/stats')).body;
    assert.equal(after.received, before.received + 1);
    assert.equal(after.rejected.forbidden, (before.rejected.forbidden ?? 0) + 1);
    assert.deepEqual([after.applied, after.duplicate], [before.applied, before.duplicate], 'the one request the client sent was refused, nothing else counted');
    const theirs = (await beta('GET', '/v1/stats')).body;
    assert.equal(theirs.applied, 0, "beta's stats do not show acme's events");
  });

  test('dead letters are per tenant', async () => {
    assert.deepEqual(
      (await beta('GET', '/v1/dead-letters')).body.dead_letters.filter((d: { id: string }) => d.id === deadId),
      [],
    );
    assert.equal((await beta('POST', `/v1/dead-letters/${encodeURIComponent(deadId)}/retry`)).status, 404);
    assert.equal((await beta('DELETE', `/v1/dead-letters/${encodeURIComponent(deadId)}`)).status, 404, 'nor drop it');
    assert.equal((await acme('GET', '/v1/dead-letters')).body.dead_letters[0].id, deadId, 'still dead, still acme’s');
  });

  test('over its rate limit a tenant gets 429 with Retry-After, and other tenants are not affected', async () => {
    const slow = as(C);
    const answers = [];
    for (let i = 0; i < 4; i++) answers.push(await slow('GET', '/v1/stats'));
    assert.deepEqual(
      answers.map((a) => a.status),
      [200, 200, 429, 429],
    );
    assert.equal(answers[2]!.body.error.code, 'rate_limited');
    assert.equal(answers[2]!.headers['retry-after'], '1');
    assert.equal((await acme('GET', '/v1/stats')).status, 200);
    s.clock.advance(1000);
    assert.equal((await slow('GET', '/v1/stats')).status, 200, 'a token is back after a second');
  });

  test('routes/test, a render a tenant pays for, is under the tenant’s rate limit too', async () => {
    s.clock.advance(5000);
    const slow = as(C);
    const probe = { labels: { fault_class: 'LOS', severity: 'MAJOR' } };
    const answers = [];
    for (let i = 0; i < 3; i++) answers.push(await slow('POST', '/v1/routes/test', probe));
    assert.deepEqual(
      answers.map((a) => a.status),
      [200, 200, 429],
      JSON.stringify(answers.map((a) => a.body)),
    );
    assert.equal(answers[2]!.body.error.code, 'rate_limited');
    assert.equal((await acme('POST', '/v1/routes/test', probe)).status, 200, 'another tenant is not affected');
  });

  test('a generated sweep of 1,000 cross-tenant requests: every one 404 or empty, and nothing of acme’s changes', async () => {
    const mine = (await acme('POST', '/v1/incidents', { ...incident, element_id: 'only-acme-has-this' })).body.dedup_key as string;
    const snapshot = async () => ({
      incident: (await acme('GET', `/v1/incidents/${mine}`)).body,
      device: (await acme('GET', '/v1/devices/acme/pos-1')).body,
      dead: (await acme('GET', '/v1/dead-letters')).body.dead_letters.find((d: { id: string }) => d.id === deadId),
    });
    const before = await snapshot();
    const call = fc.oneof(
      fc.constant(['GET', `/v1/incidents/${mine}`] as const),
      fc.constant(['DELETE', `/v1/incidents/${mine}`] as const),
      fc.constant(['GET', '/v1/devices/acme/pos-1'] as const),
      fc.constant(['POST', `/v1/dead-letters/${encodeURIComponent(deadId)}/retry`] as const),
      fc.constant(['DELETE', `/v1/dead-letters/${encodeURIComponent(deadId)}`] as const),
      fc.string({ minLength: 1, maxLength: 40 }).map((d) => ['GET', `/v1/devices/acme/${encodeURIComponent(d)}`] as const),
      fc.string({ unit: fc.constantFrom(...'0123456789abcdef'), minLength: 32, maxLength: 32 }).map((h) => ['DELETE', `/v1/incidents/dedup:${h}`] as const),
    );
    let n = 0;
    await fc.assert(
      fc.asyncProperty(call, async ([method, url]) => {
        n++;
        const r = await beta(method, url);
        return r.status === 404 && r.body.error.code === 'not_found';
      }),
      { numRuns: 1000, seed: testSeed('integration/http-tenants') },
    );
    assert.equal(n, 1000);
    assert.deepEqual(await snapshot(), before, "acme's incident, device and dead letter are as they were");
  });
  test("the dashboard's delivery totals are each tenant's own; the queue across tenants is not shown to one", async () => {
    const C_ = as(C);
    // slow spent its tokens in an earlier test: let the (injected) clock refill them.
    s.clock.advance(5_000);
    const slowBoard = (await C_('GET', '/v1/dashboard')).body;
    const boards = [(await acme('GET', '/v1/dashboard')).body, (await beta('GET', '/v1/dashboard')).body, slowBoard];
    assert.deepEqual(
      boards.map((b) => b.tenant),
      ['acme', 'beta', 'slow'],
    );
    for (const b of boards) {
      assert.equal(b.delivery.pending, null, `${b.tenant} does not see the queue of every tenant`);
      assert.equal(b.delivery.lag_seconds, null);
      assert.equal(b.delivery.dead, b.dead_letters.length, `${b.tenant}'s dead count is its own dead letters`);
    }
    assert.ok(boards[0].delivery.adapters.hook.dead >= 1, 'acme sees its own dead delivery');
    // Together the tenants' totals are the replica's: none is counted twice, none lost.
    const metrics = (await s.app.inject({ method: 'GET', url: '/metrics' })).payload;
    const total = [...metrics.matchAll(/^onceonly_deliveries_total\{adapter="hook",outcome="dead",[^}]*\} (\d+)$/gm)].reduce((a, m) => a + Number(m[1]), 0);
    assert.ok(total >= 2, `more than one tenant's deliveries died (${total})`);
    assert.equal(
      boards.reduce((a, b) => a + (b.delivery.adapters.hook?.dead ?? 0), 0),
      total,
    );
    assert.ok(
      boards.every((b) => (b.delivery.adapters.hook?.dead ?? 0) < total),
      'no tenant sees the whole replica’s totals',
    );
  });
});
