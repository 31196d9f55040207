import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import SwaggerParser from '@apidevtools/swagger-parser';
import { inProcessServer, type InProcessServer } from '../helpers/server.js';

let server: InProcessServer;
before(async () => {
  server = await inProcessServer({ store: 'memory' });
});
after(async () => {
  await server.stop();
});

test('GET /openapi.json is a valid OpenAPI 3.1 document (checked by swagger-parser)', async () => {
  const r = await fetch(`${server.url}/openapi.json`);
  assert.equal(r.status, 200);
  assert.match(r.headers.get('content-type') ?? '', /^application\/json/);
  const doc = (await r.json()) as { openapi: string; paths: Record<string, Record<string, unknown>> };
  assert.equal(doc.openapi, '3.1.0');
  // validate() dereferences in place: give it a copy.
  await SwaggerParser.validate(structuredClone(doc) as never);
  const incident = doc.paths['/v1/incidents']!.post as {
    requestBody: { content: Record<string, { schema: { required: string[]; additionalProperties: boolean } }> };
  };
  const body = incident.requestBody.content['application/json']!.schema;
  assert.deepEqual(body.required.sort(), ['element_id', 'fault_class', 'root_cause_id', 'severity'], 'the body schema is the one the route validates with');
  assert.equal(body.additionalProperties, false, 'strict: unknown fields are refused');
});

/**
 * The operations the product promises, written out here apart from the route
 * table the document is made from: comparing the document with that table
 * alone cannot notice a route dropped from both. Adding or removing a route
 * means changing this list, on purpose.
 */
const PROMISED = [
  'DELETE /api/v2/silence/{id}',
  'DELETE /v1/dead-letters/{id}',
  'DELETE /v1/incidents/{key}',
  'GET /',
  'GET /api/v2/silence/{id}',
  'GET /api/v2/silences',
  'GET /dashboard/app.js',
  'GET /dashboard/explain.js',
  'GET /dashboard/style.css',
  'GET /healthz',
  'GET /metrics',
  'GET /openapi.json',
  'GET /readyz',
  'GET /v1/audit',
  'GET /v1/dashboard',
  'GET /v1/dashboard/stream',
  'GET /v1/dead-letters',
  'GET /v1/devices/{tenant}/{device}',
  'GET /v1/groups/{group_key}',
  'POST /v1/routes/test',
  'GET /v1/heartbeats',
  'GET /v1/incidents',
  'GET /v1/incidents/{key}',
  'GET /v1/incidents/{key}/history',
  'POST /v1/incidents/{key}/ack',
  'GET /v1/stats',
  'GET /v2/heartbeats/{name}/ping',
  'GET /api/v2/alerts',
  'GET /api/v2/status',
  'POST /api/v2/silences',
  'POST /v1/alertmanager',
  'POST /v1/dead-letters/{id}/retry',
  'POST /v1/events',
  'POST /v1/heartbeats/{name}',
  'POST /v1/incidents',
  'POST /v1/violations',
  'POST /v2/alerts',
  'GET /v2/alerts',
  'GET /v2/alerts/{identifier}',
  'POST /v2/alerts/{identifier}/acknowledge',
  'POST /v2/alerts/{identifier}/close',
  'PUT /v2/alerts/{identifier}/message',
  'PUT /v2/alerts/{identifier}/description',
  'PUT /v2/alerts/{identifier}/priority',
  'POST /v2/alerts/{identifier}/tags',
  'DELETE /v2/alerts/{identifier}/tags',
  'POST /v2/alerts/{identifier}/details',
  'DELETE /v2/alerts/{identifier}/details',
  'POST /v2/alerts/{identifier}/notes',
  'GET /v2/alerts/{identifier}/notes',
  'POST /v2/alerts/{identifier}/responders',
  'POST /v2/enqueue',
  'POST /v2/heartbeats/{name}/ping',
];

test('every route the server has is in the document, and every documented operation is a route', async () => {
  const routes = server.app.routeTable;
  const undocumented = routes.filter((r) => !r.doc).map((r) => `${r.method} ${r.url}`);
  assert.deepEqual(undocumented, [], 'routes without a doc');
  const doc = (await (await fetch(`${server.url}/openapi.json`)).json()) as { paths: Record<string, Record<string, unknown>> };
  const documented = Object.entries(doc.paths)
    .flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`))
    .sort();
  const registered = routes.map((r) => `${r.method} ${r.url.replace(/:(\w+)/g, '{$1}')}`).sort();
  assert.deepEqual(documented, registered);
  assert.deepEqual(documented, [...PROMISED].sort(), 'the documented operations are the promised ones, no more and no fewer');
  // And each answers as a route (never the "no route" 404), with made-up path parameters.
  for (const op of documented) {
    const [method, path] = op.split(' ') as [string, string];
    if (path === '/v1/dashboard/stream') continue; // an event stream never ends
    const res = await server.app.inject({ method: method as 'GET', url: path.replace(/\{\w+\}/g, 'x'), ...(method === 'POST' ? { payload: {} } : {}) });
    assert.ok(!(res.statusCode === 404 && /no route/.test(res.body)), `${op} is not routed: ${res.body}`);
  }
});

test('docs/api.md is what the routes document (run `npm run api:doc` after changing a route)', async () => {
  const { readFileSync } = await import('node:fs');
  const { apiMarkdown } = await import('../../src/http/openapi/markdown.js');
  const doc = (await (await fetch(`${server.url}/openapi.json`)).json()) as Record<string, unknown>;
  const committed = readFileSync(new URL('../../docs/api.md', import.meta.url), 'utf8');
  assert.equal(committed, apiMarkdown(doc));
});
