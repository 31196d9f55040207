// needs: redis
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { startServer } from '../../src/app/start.js';
import { startFake } from '../fakes/http-fake.js';
import { startRedis } from '../helpers/redis.js';
import { tempDir } from '../helpers/tmp.js';
import { until } from '../helpers/wait.js';

/**
 * A secret in every place one can be configured, from the config file, the
 * environment and a mounted file; then every failure the destinations and the
 * store can give. Nothing may show any secret: not a log line at any level,
 * a dead letter, the dashboard, /metrics, /readyz or an error answer.
 */
const SECRETS = {
  tenantToken: 'SECRET-tenant-token-5d1e0c',
  hookPath: 'SECRET-hook-path-81b2',
  hookQuery: 'SECRET-hook-query-c44a',
  hookHeader: 'SECRET-hook-header-09fe',
  hookSigning: 'SECRET-hook-signing-key-7a6b5c',
  snowPassword: 'SECRET-snow-password-e1f0',
  jiraToken: 'SECRET-jira-token-2c3d',
  pdRoutingKey: 'SECRET-pd-routing-key-4b4b',
  slackPath: 'SECRET-slack-path-6e6e',
  mqttPassword: 'SECRET-mqtt-password-9a9a',
  storePassword: 'SECRET-store-password-3f3f',
  reloadValue: 'SECRET-in-a-broken-reload-1111',
};

test('secrets planted everywhere never reach a log line, dead letter, snapshot, metric or answer', async () => {
  const dir = tempDir();
  const redis = await startRedis();
  // Every destination refuses, the way a wrong credential or a broken mapping does.
  const dest = await startFake((r) =>
    r.path.includes('servicenow') || r.path.startsWith('/rest/')
      ? { status: 500, body: { error: 'down' } }
      : { status: 401, body: { error: 'bad credentials' } },
  );
  const lines: string[] = [];
  const logger = pino(
    { level: 'trace' },
    new Writable({
      write(chunk, _enc, done) {
        lines.push(String(chunk));
        done();
      },
    }),
  );
  const snowFile = join(dir.path, 'snow-password');
  writeFileSync(snowFile, `${SECRETS.snowPassword}\n`);
  process.env.OO_TEST_TENANT_TOKEN = SECRETS.tenantToken;
  process.env.OO_TEST_JIRA_TOKEN = SECRETS.jiraToken;
  const config = join(dir.path, 'onceonly.yaml');
  const good = `
tenants: [ { id: acme, tokens: ["\${env:OO_TEST_TENANT_TOKEN}"] } ]
failopen: { timeout_ms: 2000, probe_interval_ms: 100, journal_path: ${join(dir.path, 'journal.db')} }
delivery: { max_retries: 1, base_delay_ms: 10, max_delay_ms: 20 }
adapters:
  - { name: hook, type: webhook, url: "${dest.url}/hooks/${SECRETS.hookPath}?token=${SECRETS.hookQuery}", headers: { X-Api-Key: ${SECRETS.hookHeader} }, secret: ${SECRETS.hookSigning} }
  - { name: snow, type: servicenow, instance_url: "${dest.url}/servicenow", username: onceonly, password: "\${file:${snowFile}}" }
  - { name: jira, type: jira, base_url: "${dest.url}", project: OPS, username: bot, api_token: "\${env:OO_TEST_JIRA_TOKEN}" }
  - { name: pd, type: pagerduty, routing_key: ${SECRETS.pdRoutingKey}, url: "${dest.url}/v2/enqueue" }
  - { name: slack, type: slack, url: "${dest.url}/services/${SECRETS.slackPath}" }
  - { name: mqtt, type: mqtt, url: "mqtt://onceonly:${SECRETS.mqttPassword}@127.0.0.1:9", kinds: [incident], timeout_ms: 1000 }
`;
  writeFileSync(config, good);
  // The store's own password: Redis asks for it.
  redis.cli('CONFIG', 'SET', 'requirepass', SECRETS.storePassword);
  const server = await startServer({
    port: 0,
    host: '127.0.0.1',
    store: `redis://default:${SECRETS.storePassword}@127.0.0.1:${redis.port}`,
    configPath: config,
    logger,
    delivery: { idleMs: 20 },
  });
  const seen: string[] = [];
  const call = async (method: 'GET' | 'POST', url: string, token: string | null, payload?: object) => {
    const r = await server.app.inject({ method, url, headers: token ? { authorization: `Bearer ${token}` } : {}, ...(payload ? { payload } : {}) });
    seen.push(`${method} ${url} → ${r.statusCode} ${JSON.stringify(r.headers)} ${r.payload}`);
    return r;
  };
  try {
    const T = SECRETS.tenantToken;
    // The references resolved: the tenant's token from the environment works.
    assert.equal(
      (await call('POST', '/v1/incidents', T, { element_id: 'olt-1', fault_class: 'LOS', root_cause_id: 'cut', severity: 'MAJOR' })).statusCode,
      200,
    );
    await call('POST', '/v2/enqueue', null, {
      routing_key: T,
      event_action: 'trigger',
      dedup_key: 'k1',
      payload: { summary: 's', source: 'h', severity: 'error' },
    });
    // Wrong tokens, near misses of the right one included.
    for (const wrong of [`${T}x`, T.slice(0, -1), 'nope']) await call('GET', '/v1/incidents', wrong);
    await call('POST', '/v2/enqueue', null, {
      routing_key: `${T}-wrong`,
      event_action: 'trigger',
      dedup_key: 'k2',
      payload: { summary: 's', source: 'h', severity: 'error' },
    });
    // Every adapter fails until its delivery is dead (MQTT's broker port is closed).
    await until(
      async () => JSON.parse((await call('GET', '/v1/dead-letters', T)).payload).dead_letters.length >= 10,
      30_000,
      () => 'dead letters of every adapter',
    );
    const sent = dest.requests;
    assert.ok(
      sent.some((r) => r.headers.authorization === `Basic ${Buffer.from(`onceonly:${SECRETS.snowPassword}`).toString('base64')}`),
      'the ServiceNow password came from the file',
    );
    assert.ok(
      sent.some((r) => r.headers.authorization === `Basic ${Buffer.from(`bot:${SECRETS.jiraToken}`).toString('base64')}`),
      'the Jira token came from the environment',
    );
    // A reload that fails on a field holding a secret-looking value.
    writeFileSync(config, `${good}\nincidents: { ttl_seconds: "${SECRETS.reloadValue}" }\n`);
    assert.throws(
      () => server.config.reload(),
      (e: Error) => {
        seen.push(e.message);
        return /incidents\.ttl_seconds/.test(e.message);
      },
    );
    writeFileSync(config, good);
    // The store goes away: fail open, /readyz, errors; then it comes back, with its password again.
    await redis.kill('SIGKILL');
    await call('POST', '/v1/incidents', T, { element_id: 'olt-2', fault_class: 'LOS', root_cause_id: 'cut', severity: 'MAJOR' });
    await until(async () => (await call('GET', '/readyz', null)).statusCode === 503, 10_000);
    await call('GET', '/v1/dashboard', T);
    await redis.restart();
    redis.cli('CONFIG', 'SET', 'requirepass', SECRETS.storePassword);
    await until(
      async () => (await call('GET', '/readyz', null)).statusCode === 200,
      20_000,
      () => 'ready again after the store returned',
    );

    seen.push(JSON.stringify(JSON.parse((await call('GET', '/v1/dead-letters?limit=1000', T)).payload)));
    seen.push((await call('GET', '/v1/dashboard', T)).payload);
    seen.push((await call('GET', '/metrics', null)).payload);
    seen.push((await call('GET', '/v1/incidents', T)).payload);
    assert.ok(lines.length > 20, `the run logged (${lines.length} lines)`);
    assert.ok(
      lines.some((l) => /dead letter/.test(l)),
      'dead letters were logged',
    );
    assert.ok(
      lines.some((l) => /store unreachable/.test(l)),
      'the outage was logged',
    );
    const everything = [...lines, ...seen];
    for (const [name, secret] of Object.entries(SECRETS)) {
      const leak = everything.find((t) => t.includes(secret));
      assert.equal(leak, undefined, `${name} leaked: ${leak?.slice(0, 400)}`);
    }
  } finally {
    delete process.env.OO_TEST_TENANT_TOKEN;
    delete process.env.OO_TEST_JIRA_TOKEN;
    await server.close();
    await dest.close();
    await redis.stop();
    dir.remove();
  }
});
