// needs: openssl
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startSink } from '../fakes/http-fake.js';
import { REPO_ROOT, spawnServer } from '../helpers/process.js';
import { tempDir } from '../helpers/tmp.js';
import { selfSignedCert } from '../helpers/tls.js';
import { until } from '../helpers/wait.js';
import { receiverQuiet } from '../helpers/settle.js';

const ROUTING_KEY = 'r0ut1ng-key-of-tenant-acme';

/**
 * PagerDuty's own JavaScript client (@pagerduty/pdjs) in a process of its
 * own, speaking HTTPS to `server: 127.0.0.1:PORT` and trusting the test's
 * certificate through NODE_EXTRA_CA_CERTS, as a user's tool would.
 */
function pdjs(server: string, ca: string, dir: string, events: unknown[]): Array<{ status: number; data: any }> {
  const script = join(dir, 'pd.cjs');
  writeFileSync(
    script,
    `const { event } = require(${JSON.stringify(join(REPO_ROOT, 'node_modules/@pagerduty/pdjs'))});
(async () => {
  const out = [];
  for (const data of ${JSON.stringify(events)}) {
    const r = await event({ server: ${JSON.stringify(server)}, data });
    out.push({ status: r.status, data: r.data });
  }
  process.stdout.write(JSON.stringify(out));
})().catch((e) => { console.error(e); process.exit(1); });`,
  );
  const r = spawnSync(process.execPath, [script], { env: { ...process.env, NODE_EXTRA_CA_CERTS: ca }, encoding: 'utf8', timeout: 30_000 });
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout);
}

test('PagerDuty drop-in: pdjs over TLS; trigger ×3, acknowledge ×2, re-severity, resolve, re-trigger → create, update, update, close, create', async () => {
  const hook = await startSink(200, {});
  const dir = tempDir();
  const { cert, key } = selfSignedCert(dir.path);
  const config = join(dir.path, 'c.yaml');
  writeFileSync(config, `tenants: [ { id: acme, tokens: [${ROUTING_KEY}] } ]\nadapters: [ { name: hook, type: webhook, url: "${hook.url}/in" } ]\n`);
  const s = await spawnServer(['--port', '0', '--store', `sqlite:${join(dir.path, 'o.db')}`, '--config', config, '--tls-cert', cert, '--tls-key', key]);
  try {
    const server = s.url.replace('https://', '');
    const trigger = (severity: string) => ({
      routing_key: ROUTING_KEY,
      event_action: 'trigger',
      dedup_key: 'disk-full-db1',
      payload: { summary: 'db1: disk 97% full', source: 'db1', severity, custom_details: { free_gb: 3 } },
    });
    const ack = { routing_key: ROUTING_KEY, event_action: 'acknowledge', dedup_key: 'disk-full-db1' };
    const resolve = { routing_key: ROUTING_KEY, event_action: 'resolve', dedup_key: 'disk-full-db1' };
    const answers = pdjs(server, cert, dir.path, [
      trigger('critical'),
      trigger('critical'),
      trigger('critical'),
      ack,
      ack,
      trigger('error'),
      resolve,
      trigger('critical'),
    ]);
    assert.deepEqual(
      answers.map((a) => a.status),
      Array(8).fill(202),
    );
    assert.ok(answers.every((a) => a.data.status === 'success' && a.data.message === 'Event processed' && a.data.dedup_key === 'disk-full-db1'));

    await until(
      () => hook.requests.length >= 5,
      10_000,
      () => `${hook.requests.length} delivered`,
    );
    await receiverQuiet(() => hook.requests, 500);
    const got = hook.requests.map((r) => [r.body.action, r.body.severity, r.headers['idempotency-key']]);
    assert.deepEqual(got, [
      ['create', 'CRITICAL', 'acme/pd:disk-full-db1:create:1'],
      ['update', 'CRITICAL', 'acme/pd:disk-full-db1:update:1'],
      ['update', 'MAJOR', 'acme/pd:disk-full-db1:update:2'],
      ['close', 'MAJOR', 'acme/pd:disk-full-db1:close:1'],
      ['create', 'CRITICAL', 'acme/pd:disk-full-db1:create:2'],
    ]);
    assert.equal(hook.requests[0]!.body.tenant, 'acme');
    assert.deepEqual(hook.requests[0]!.body.data, { dedup_key: 'disk-full-db1', severity: 'critical', source: 'db1', custom_details: { free_gb: 3 } });

    // A trigger without dedup_key gets one; a wrong routing key and an invalid event answer as PagerDuty does.
    const [generated, wrong, invalid] = pdjs(server, cert, dir.path, [
      { routing_key: ROUTING_KEY, event_action: 'trigger', payload: { summary: 's', source: 'x', severity: 'info' } },
      { ...trigger('critical'), routing_key: 'not-a-routing-key-anyone-has' },
      { routing_key: ROUTING_KEY, event_action: 'trigger', payload: { source: 'x', severity: 'loud' } },
    ]);
    assert.equal(generated!.status, 202);
    assert.match(generated!.data.dedup_key, /^[0-9a-f]{32}$/);
    assert.equal(wrong!.status, 401);
    assert.deepEqual(wrong!.data, {
      status: 'unauthorized',
      message: 'the routing_key is not a valid token',
      errors: ['the routing_key is not a valid token'],
    });
    assert.equal(invalid!.status, 400);
    assert.deepEqual(invalid!.data, {
      status: 'invalid event',
      message: 'Event object is invalid',
      errors: ["'payload.summary' is missing or blank", "'payload.severity' must be one of critical, error, warning, info"],
    });
  } finally {
    await s.stop();
    await hook.close();
    dir.remove();
  }
});
