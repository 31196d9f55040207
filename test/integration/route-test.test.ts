import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { inProcessServer, type InProcessServer } from '../helpers/server.js';

const ACME = 'token-of-tenant-acme-0001';
const BETA = 'token-of-tenant-beta-0001';

let s: InProcessServer;
before(async () => {
  s = await inProcessServer({
    store: 'memory:',
    config: `
tenants:
  - { id: acme, tokens: [${ACME}] }
  - { id: beta, tokens: [${BETA}] }
lookups:
  queues: { eu: "NOC EU" }
adapters:
  - name: hook
    type: webhook
    url: "http://127.0.0.1:9/nobody"
    fields: { queue: "{{ lookups.queues[labels.region] }}", who: "{{ labels.tenant }}/{{ labels.team }}", sev: "{{ severity }}" }
  - { name: plain, type: webhook, url: "http://127.0.0.1:9/plain" }
  - name: runaway
    type: webhook
    url: "http://127.0.0.1:9/runaway"
    fields: { x: "{% for i in (1..100000000) %}x{% endfor %}" }
`,
  });
});
after(() => s.stop());

const post = async (token: string | null, body: unknown) => {
  const res = await s.app.inject({
    method: 'POST',
    url: '/v1/routes/test',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    payload: JSON.stringify(body),
  });
  return { status: res.statusCode, body: res.json() };
};

test("the adapters a label set reaches and their rendered fields, under the caller's tenant", async () => {
  const r = await post(ACME, { labels: { region: 'eu', team: 'net', severity: 'CRITICAL' } });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  assert.deepEqual(r.body.adapters, ['hook', 'plain', 'runaway'], 'without route: every adapter');
  assert.deepEqual(r.body.fields, { hook: { queue: 'NOC EU', who: 'acme/net', sev: 'CRITICAL' } });
  assert.match(r.body.errors?.runaway ?? '', /^field x did not render: .*(memory alloc|render) limit exceeded/, 'a render that would fail at delivery says so');
  // The same tenant label given explicitly is the caller's own: taken.
  assert.equal((await post(ACME, { labels: { tenant: 'acme' } })).body.fields.hook.who, 'acme/');
});

test("another tenant's label, no token, or a bad body: refused, each with a clear error", async () => {
  const other = await post(ACME, { labels: { tenant: 'beta', region: 'eu' } });
  assert.equal(other.status, 403);
  assert.equal(other.body.error.code, 'forbidden');
  assert.equal((await post(null, { labels: {} })).status, 401);
  for (const [body, path] of [
    [{}, 'labels'],
    [{ labels: 'team=net' }, 'labels'],
    [{ labels: { team: 7 } }, 'labels.team'],
    [{ labels: { '1x': 'y' } }, 'labels'],
    [{ labels: Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`l${i}`, 'v'])) }, 'labels'],
    [{ labels: {}, extra: 1 }, 'extra'],
  ] as const) {
    const r = await post(BETA, body);
    assert.equal(r.status, 400, JSON.stringify(body));
    assert.equal(r.body.error.code, 'invalid_input');
    assert.ok(
      (r.body.error.issues as Array<{ path: string }>).some((i) => i.path === path),
      `${JSON.stringify(body)}: ${JSON.stringify(r.body.error.issues)}`,
    );
  }
});
