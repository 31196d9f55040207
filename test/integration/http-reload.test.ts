import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { inProcessServer, type InProcessServer } from '../helpers/server.js';

/**
 * Tokens and rate limits follow a reload at once, on every tenant route: a
 * rotated token stops working and its replacement starts, a removed tenant is
 * locked out, a changed limit is the one enforced, and every route (not just
 * the one a test happens to call) spends the same bucket.
 */

const OLD = 'acme-token-before-rotation-01';
const NEW = 'acme-token-after-rotation-002';
const BETA = 'beta-token-removed-later-0003';
let s: InProcessServer;
const call = (token: string, method = 'GET', url = '/v1/stats', body?: unknown) =>
  s.app.inject({ method: method as 'GET', url, headers: { authorization: `Bearer ${token}` }, ...(body === undefined ? {} : { payload: body as object }) });
const tenants = (acmeTokens: string[], perSecond: number, burst: number, beta = true) =>
  `tenants:\n  - { id: acme, tokens: [${acmeTokens.join(', ')}], rate_limit: { per_second: ${perSecond}, burst: ${burst} } }\n` +
  (beta ? `  - { id: beta, tokens: [${BETA}] }\n` : '');

before(async () => {
  s = await inProcessServer({ config: tenants([OLD], 1, 3) });
});
after(() => s.stop());

test('every tenant route spends the one bucket: past the burst each answers 429 with Retry-After, and a refill lets them through', async () => {
  const doc = (await call(BETA, 'GET', '/openapi.json')).json() as { paths: Record<string, Record<string, { security?: unknown[] }>> };
  const routes = Object.entries(doc.paths).flatMap(([path, ops]) =>
    Object.entries(ops)
      .filter(([, op]) => !op.security)
      .map(([method]) => ({
        method: method.toUpperCase(),
        url: path.replace(/\{(\w+)\}/g, (_, p: string) => (p === 'key' ? `dedup:${'0'.repeat(32)}` : p === 'tenant' ? 'acme' : 'x')),
      })),
  );
  assert.ok(routes.length >= 20, `${routes.length} tenant routes`);
  for (const r of routes) {
    s.clock.advance(10_000); // a full bucket
    for (let i = 0; i < 3; i++) assert.notEqual((await call(OLD)).statusCode, 429, 'the burst goes');
    const limited = await call(OLD, r.method, r.url);
    assert.equal(limited.statusCode, 429, `${r.method} ${r.url} is limited with the rest: ${limited.payload.slice(0, 200)}`);
    assert.ok(Number(limited.headers['retry-after']) >= 1, `${r.method} ${r.url}: Retry-After`);
    // PagerDuty's and Opsgenie's routes answer errors as they do; every other route in the API's shape.
    if (r.url === '/v2/enqueue') assert.equal(limited.json().status, 'rate_limited', limited.payload);
    else if (r.url.startsWith('/v2/alerts')) assert.match(limited.json().message, /over its rate limit/, limited.payload);
    else assert.equal(limited.json().error.code, 'rate_limited', `${r.method} ${r.url}: ${limited.payload}`);
  }
  s.clock.advance(1000);
  assert.equal((await call(OLD)).statusCode, 200, 'a token back after a second at 1/s');
  assert.equal((await call(BETA)).statusCode, 200, 'another tenant was never limited');
});

test('a reload rotates the token, removes a tenant and changes the limit, at once', async () => {
  s.clock.advance(10_000);
  assert.equal((await call(OLD)).statusCode, 200);
  s.writeConfig(tenants([NEW], 100, 50, false));
  s.config.reload();
  const before = await call(OLD);
  assert.equal(before.statusCode, 401, 'the rotated-out token is refused');
  assert.equal((await call(BETA)).statusCode, 401, 'a removed tenant is locked out');
  s.clock.advance(1000); // refill at the new rate
  let ok = 0;
  for (let i = 0; i < 60; i++) if ((await call(NEW)).statusCode === 200) ok++;
  assert.equal(ok, 50, 'the new burst (50), not the old one (3)');
  // Lowering it takes effect as well: the bucket is capped at the new burst.
  s.writeConfig(tenants([NEW, OLD], 1, 2));
  s.config.reload();
  s.clock.advance(60_000);
  const statuses = [];
  for (let i = 0; i < 4; i++) statuses.push((await call(i % 2 ? OLD : NEW)).statusCode);
  assert.deepEqual(statuses, [200, 200, 429, 429], 'two tokens of one tenant share its bucket, capped at the new burst of 2');
  assert.equal((await call(BETA)).statusCode, 200, 'beta is back with its token');
});

test('a reload that breaks the tenants is refused and the old ones stay in force', async () => {
  s.writeConfig('tenants:\n  - { id: acme, tokens: [short] }\n');
  assert.throws(() => s.config.reload(), /tenants/);
  s.clock.advance(60_000);
  assert.equal((await call(NEW)).statusCode, 200, 'the config in force is unchanged');
});
