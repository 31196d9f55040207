import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { FAILED_TOKENS } from '../../src/http/access.js';
import { inProcessServer, type InProcessServer } from '../helpers/server.js';

const A = 'token-of-tenant-acme-0001';
const B = 'token-of-tenant-beta-0002';
const incident = { element_id: 'olt-9', fault_class: 'LOS', root_cause_id: 'cut', severity: 'MAJOR' };
const event = { tenant_id: 'beta', device_id: 'pos-1', boot_id: 'b1', sequence: 1, state: 'STOPPED', observed_at: '2026-11-30T12:00:00Z' };

/** The routes anyone may call: probes, scrapers, the dashboard's page and this API's description. */
const OPEN = ['GET /', 'GET /dashboard/app.js', 'GET /dashboard/explain.js', 'GET /dashboard/style.css', 'GET /healthz', 'GET /metrics', 'GET /readyz'];

describe('access is decided on the matched route', () => {
  let s: InProcessServer;
  const call = async (method: 'GET' | 'POST' | 'DELETE', url: string, opts: { token?: string; body?: unknown; host?: string } = {}) => {
    const res = await s.app.inject({
      method,
      url,
      headers: { ...(opts.token ? { authorization: `Bearer ${opts.token}` } : {}), ...(opts.host ? { host: opts.host } : {}) },
      ...(opts.body === undefined ? {} : { payload: opts.body as object }),
    });
    return { status: res.statusCode, body: res.body ? (JSON.parse(res.body) as any) : null };
  };

  before(async () => {
    s = await inProcessServer({ config: `tenants:\n  - { id: acme, tokens: [${A}] }\n  - { id: beta, tokens: [${B}] }\n` });
  });
  after(() => s.stop());

  test('every route is open or needs a token, and the open ones are exactly the probes, /metrics and the dashboard’s page', () => {
    const routes = s.app.routeTable.map((r) => ({ op: `${r.method} ${r.url}`, access: r.doc?.access }));
    assert.deepEqual(
      routes.filter((r) => r.access !== 'open' && r.access !== 'tenant').map((r) => r.op),
      [],
      'a route with no access rule',
    );
    assert.deepEqual(
      routes
        .filter((r) => r.access === 'open')
        .map((r) => r.op)
        .sort(),
      OPEN,
    );
  });

  test('however the path is spelled, a tenant route without a token is 401 and changes nothing', async () => {
    const spellings: Array<['GET' | 'POST' | 'DELETE', string, unknown?]> = [
      ['GET', '/%761/incidents'],
      ['POST', '/v%31/incidents', incident],
      ['POST', '/%76%31/incidents', incident],
      ['POST', '/%761/events', event],
      ['GET', '/%761/dashboard'],
      ['GET', '/v1/dead-letters?limit=1'],
      ['GET', '/v1/d%65ad-letters'],
      ['DELETE', '/v1/dead-letters/0:1-0.hook'],
      ['DELETE', '/v1/d%65ad-letters/0:1-0.hook'],
      ['GET', `/v1/devices/beta/pos-1`],
    ];
    for (const [method, url, body] of spellings) {
      const r = await call(method, url, { body });
      assert.equal(r.status, 401, `${method} ${url}: ${JSON.stringify(r.body)}`);
      assert.equal(r.body.error.code, 'unauthorized');
    }
    assert.equal((await call('GET', '/v1/incidents', { token: A })).body.incidents.length, 0, 'no incident was created');
    assert.equal((await call('GET', '/v1/devices/beta/pos-1', { token: B })).status, 404, 'no device was changed');
  });

  test('a URL that matches no route is 404 in the error shape, a malformed percent-encoding too', async () => {
    for (const url of ['/v1/nothing-here', '/%E0%A4%A', '/v1/incidents/%']) {
      const r = await call('GET', url);
      assert.equal(r.status, 404, url);
      assert.equal(r.body.error.code, 'not_found', url);
    }
  });

  test('a client that keeps presenting wrong tokens is throttled by its address (429 with Retry-After)', async () => {
    // The refusals of the tests above came from the same address and count too.
    const statuses: number[] = [];
    for (let i = 0; i < FAILED_TOKENS.burst + 5; i++) statuses.push((await call('GET', '/v1/incidents', { token: `wrong-${i}` })).status);
    assert.ok(statuses.filter((x) => x === 401).length <= FAILED_TOKENS.burst, statuses.join(','));
    assert.ok(statuses.includes(429), statuses.join(','));
    assert.deepEqual([...new Set(statuses.slice(statuses.indexOf(429)))], [429], `once throttled, throttled: ${statuses.join(',')}`);
    const res = await s.app.inject({ method: 'GET', url: '/v1/incidents', headers: { authorization: 'Bearer wrong-again' } });
    assert.ok(Number(res.headers['retry-after']) >= 1);
    assert.equal((await call('GET', '/v1/incidents', { token: A })).status, 200, 'a valid token still works');
  });
});

describe('without tenants, only loopback and allowed host names are served', () => {
  let s: InProcessServer;
  before(async () => {
    s = await inProcessServer({ config: 'allowed_hosts: [onceonly.internal]\n' });
  });
  after(() => s.stop());

  test('Host decides: loopback names and allowed_hosts pass, any other is 403 and changes nothing', async () => {
    const post = (host: string) => s.app.inject({ method: 'POST', url: '/v1/incidents', headers: { host }, payload: incident });
    for (const host of ['localhost', 'localhost:8080', '127.0.0.1:9000', '[::1]:8080', 'onceonly.internal:8080', 'LOCALHOST']) {
      assert.equal((await post(host)).statusCode, 200, host);
    }
    for (const host of ['evil.example', 'evil.example:8080', 'localhost.evil.example', '10.0.0.1']) {
      const r = await post(host);
      assert.equal(r.statusCode, 403, host);
      assert.equal(JSON.parse(r.body).error.code, 'forbidden');
    }
    const list = await s.app.inject({ method: 'GET', url: '/v1/incidents', headers: { host: 'localhost' } });
    assert.equal(JSON.parse(list.body).incidents[0].refires, 5, 'six accepted arrivals of one fault; the refused ones changed nothing');
  });

  test('a state-changing request a browser sends from another site is 403 and changes nothing; the page cannot be framed', async () => {
    const key = 'cross-site-probe';
    const post = (headers: Record<string, string>) =>
      s.app.inject({ method: 'POST', url: '/v1/incidents', headers: { host: '127.0.0.1:8080', ...headers }, payload: { ...incident, element_id: key } });
    const crossSite: Array<Record<string, string>> = [
      { origin: 'https://evil.example' },
      { origin: 'http://localhost.evil.example:8080' },
      { origin: 'null' },
      { origin: 'not a url' },
      { 'sec-fetch-site': 'cross-site' },
      { 'sec-fetch-site': 'cross-site', origin: 'http://127.0.0.1:8080' },
    ];
    for (const headers of crossSite) {
      const r = await post(headers);
      assert.equal(r.statusCode, 403, JSON.stringify(headers));
      assert.equal(JSON.parse(r.body).error.code, 'forbidden');
    }
    const ping = await s.app.inject({
      method: 'DELETE',
      url: '/api/v2/silence/00000000-0000-4000-8000-000000000000',
      headers: { host: 'localhost', origin: 'https://evil.example' },
    });
    assert.equal(ping.statusCode, 403, 'every state-changing method, not only POST');
    const list = await s.app.inject({ method: 'GET', url: '/v1/incidents', headers: { host: 'localhost' } });
    assert.ok(!JSON.stringify(JSON.parse(list.body)).includes(key), 'nothing was decided');
    // The dashboard's own page, a same-site browser and a producer without those headers pass.
    const sameSite: Array<Record<string, string>> = [
      { origin: 'http://127.0.0.1:8080', 'sec-fetch-site': 'same-origin' },
      { origin: 'http://onceonly.internal' },
      {},
    ];
    for (const headers of sameSite) {
      assert.equal((await post(headers)).statusCode, 200, JSON.stringify(headers));
    }
    // Reads stay open to a cross-site GET (a browser does not let the page read the answer).
    const read = await s.app.inject({ method: 'GET', url: '/healthz', headers: { host: 'localhost', origin: 'https://evil.example' } });
    assert.equal(read.statusCode, 200);
    const page = await s.app.inject({ method: 'GET', url: '/', headers: { host: 'localhost' } });
    assert.equal(page.headers['x-frame-options'], 'DENY');
    assert.match(String(page.headers['content-security-policy']), /frame-ancestors 'none'/);
    assert.match(String(page.headers['content-security-policy']), /script-src 'self'/);
  });
});
