import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { inProcessServer, type InProcessServer } from '../helpers/server.js';

/**
 * /v2/enqueue takes the token as `routing_key` when no Authorization header
 * comes. That token is checked before the body is validated: an
 * unauthenticated body, valid or not, is refused 401 and meets the
 * wrong-token throttle (429 past its burst), and never reaches the validator.
 */
const TOKEN = 'enqueue-tenant-token-0123456789';
let s: InProcessServer;
before(async () => {
  s = await inProcessServer({ config: `tenants:\n  - { id: acme, tokens: [${TOKEN}] }\n` });
});
after(() => s?.stop());

const post = (body: unknown, headers: Record<string, string> = {}) =>
  s.app.inject({ method: 'POST', url: '/v2/enqueue', payload: body as object, headers: { 'content-type': 'application/json', ...headers } });

test('an unauthenticated body is refused for its token before it is validated, and the refusals are throttled', async () => {
  const statuses: number[] = [];
  for (let i = 0; i < 25; i++) {
    // Invalid too (no event_action, a payload of the wrong type): without a valid token it must not matter.
    const r = await post({ routing_key: `not-a-token-${i}`, payload: 'x'.repeat(1000) });
    statuses.push(r.statusCode);
  }
  assert.ok(
    statuses.every((c) => c === 401 || c === 429),
    `401 or 429, never a validation answer: ${statuses.join(',')}`,
  );
  assert.ok(statuses.includes(429), `past the wrong-token burst the address is throttled: ${statuses.join(',')}`);
  for (const body of [[1, 2], { event_action: 'trigger' }, { routing_key: 7 }]) {
    const r = await post(body, { 'x-forwarded-for': '10.9.9.9' });
    assert.ok([401, 429].includes(r.statusCode), `${JSON.stringify(body)}: ${r.statusCode} ${r.body}`);
  }
});

test('with a valid routing_key the body is validated as PagerDuty does, and a valid event is processed', async () => {
  const bad = await post({ routing_key: TOKEN, event_action: 'explode' }, { authorization: `Bearer ${TOKEN}` });
  assert.equal(bad.statusCode, 400);
  assert.equal(JSON.parse(bad.body).status, 'invalid event');
  const good = await post({
    routing_key: TOKEN,
    event_action: 'trigger',
    dedup_key: 'db1-disk',
    payload: { summary: 'disk full', source: 'db1', severity: 'critical' },
  });
  assert.equal(good.statusCode, 202, good.body);
  assert.equal(JSON.parse(good.body).dedup_key, 'db1-disk');
});
