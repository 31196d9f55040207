import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { request, type IncomingMessage } from 'node:http';
import { STREAM_LIMITS } from '../../src/http/routes/dashboard.js';
import { inProcessServer, type InProcessServer } from '../helpers/server.js';
import { until } from '../helpers/wait.js';

let s: InProcessServer;
before(async () => {
  s = await inProcessServer({ store: 'memory' });
});
after(() => s.stop());

/** Opens a dashboard stream and resolves with its response once the headers are in. */
const open = () =>
  new Promise<IncomingMessage>((resolve, reject) => {
    const req = request(`${s.url}/v1/dashboard/stream`, (res) => resolve(res));
    req.on('error', reject);
    req.end();
  });

test(`dashboard streams are capped per tenant (${STREAM_LIMITS.perTenant}); a closed one frees its place`, async () => {
  const held: IncomingMessage[] = [];
  for (let i = 0; i < STREAM_LIMITS.perTenant; i++) {
    const res = await open();
    assert.equal(res.statusCode, 200);
    held.push(res);
  }
  const refused = await open();
  assert.equal(refused.statusCode, 429);
  assert.ok(Number(refused.headers['retry-after']) >= 1);
  let body = '';
  for await (const chunk of refused) body += chunk;
  assert.equal(JSON.parse(body).error.code, 'rate_limited');
  assert.match(JSON.parse(body).error.message, /too many open dashboard streams/);

  held.pop()!.destroy();
  const again = await until(async () => {
    const res = await open();
    if (res.statusCode === 200) return res;
    res.resume();
    return null;
  }, 5000);
  held.push(again);
  for (const res of held) res.destroy();
});
