import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { inProcessServer, type InProcessServer } from '../helpers/server.js';

/**
 * An Idempotency-Key makes the server hash the request before the route runs.
 * A body nested far deeper than any route takes must get the route's answer,
 * a 400 naming the depth, with or without the header: never a 500 from
 * serialising it, and nothing stored under the key.
 */
let s: InProcessServer;
before(async () => {
  s = await inProcessServer({ config: 'heartbeats: [ { name: nightly, interval_seconds: 86400 } ]\n' });
});
after(() => s?.stop());

/** {"details": {"a": {"a": … 10,000 levels … }}} as text: built by hand, since JSON.stringify of it would overflow. */
const deep = (levels: number, field = 'details') => `{"${field}":${'{"a":'.repeat(levels)}1${'}'.repeat(levels)}}`;

/** The POST routes that read a body; the other two (a heartbeat ping, a dead letter's retry) take none, and must not fail on one. */
const BODY_ROUTES = ['/v1/incidents', '/v1/events', '/v1/violations', '/v1/alertmanager', '/v2/enqueue', '/api/v2/silences'];
const ROUTES = [...BODY_ROUTES, '/v1/heartbeats/nightly', '/v1/dead-letters/0:1-0.hook/retry'];

test('a body nested 10,000 deep answers 400 on every POST route that reads one, never a 5xx on any, with and without an Idempotency-Key; the key stays free', async () => {
  for (const url of ROUTES) {
    for (const key of [undefined, `deep-${url}`]) {
      const r = await s.app.inject({
        method: 'POST',
        url,
        payload: deep(10_000),
        headers: { 'content-type': 'application/json', ...(key ? { 'idempotency-key': key } : {}) },
      });
      assert.ok(r.statusCode < 500, `${url} ${key ? 'with' : 'without'} a key: ${r.statusCode} ${r.payload.slice(0, 200)}`);
      if (!BODY_ROUTES.includes(url)) continue;
      assert.equal(r.statusCode, 400, `${url}: ${r.payload.slice(0, 200)}`);
      assert.equal(
        JSON.parse(r.payload).error?.code ?? JSON.parse(r.payload).status,
        url === '/v2/enqueue' ? 'invalid event' : 'invalid_input',
        `${url}: ${r.payload.slice(0, 200)}`,
      );
    }
  }
  // The key was not taken by the refused body: a real request with it runs.
  const ok = await s.app.inject({
    method: 'POST',
    url: '/v1/incidents',
    payload: { element_id: 'olt-1', fault_class: 'LOS', root_cause_id: 'cut', severity: 'MAJOR' },
    headers: { 'idempotency-key': 'deep-/v1/incidents' },
  });
  assert.equal(ok.statusCode, 200, ok.payload);
  assert.equal(ok.headers['idempotent-replayed'], undefined);
});
