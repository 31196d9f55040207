import { test } from 'node:test';
import assert from 'node:assert/strict';
import Fastify, { type FastifyRequest } from 'fastify';
import { RateLimiter } from '../../src/access/rate-limit.js';
import { parseConfig } from '../../src/config/load.js';
import { manualClock } from '../../src/core/clock.js';
import { accessControl } from '../../src/http/access.js';
import { ApiError, errorBody } from '../../src/http/errors.js';

// Every route the product has today names its rule, so only this test
// exercises what happens to one that does not: a route added tomorrow
// without `access` must need a tenant's token, never be open.
// Planted fault it catches: accessControl returning early when a route has no doc (the route became open).
test('a route that names no access rule needs a tenant token (deny by default); one that says open is open', async () => {
  const token = 'deny-default-token-0000001';
  const config = parseConfig(`tenants:\n  - { id: acme, tokens: [${token}] }\n`, 'test.yaml');
  const app = Fastify();
  app.decorateRequest('tenant', 'default');
  app.decorateRequest('scoped', false);
  app.addHook(
    'onRequest',
    accessControl(() => config, new RateLimiter(manualClock())),
  );
  app.setErrorHandler((err, _req, reply) =>
    err instanceof ApiError ? reply.code(err.status).send(errorBody(err)) : reply.code(500).send({ error: String(err) }),
  );
  let reached = 0;
  const handler = async (req: FastifyRequest) => {
    reached++;
    return { tenant: req.tenant };
  };
  app.get('/new-route-without-a-rule', handler);
  app.post('/new-route-without-a-rule', handler);
  app.get('/open-route', { config: { doc: { access: 'open' } } } as never, handler);
  try {
    for (const method of ['GET', 'POST'] as const) {
      const anonymous = await app.inject({ method, url: '/new-route-without-a-rule', payload: method === 'POST' ? {} : undefined });
      assert.equal(anonymous.statusCode, 401, `${method} without a token`);
      assert.equal(JSON.parse(anonymous.payload).error.code, 'unauthorized');
      const wrong = await app.inject({ method, url: '/new-route-without-a-rule', headers: { authorization: 'Bearer not-a-token-at-all-xx' } });
      assert.equal(wrong.statusCode, 401, `${method} with a wrong token`);
    }
    assert.equal(reached, 0, 'the handler never ran for an unauthenticated call');
    const ok = await app.inject({ method: 'GET', url: '/new-route-without-a-rule', headers: { authorization: `Bearer ${token}` } });
    assert.deepEqual([ok.statusCode, JSON.parse(ok.payload)], [200, { tenant: 'acme' }], "a tenant's token passes and names the tenant");
    assert.equal((await app.inject({ method: 'GET', url: '/open-route' })).statusCode, 200, 'a route that says open needs nothing');
  } finally {
    await app.close();
  }
});
