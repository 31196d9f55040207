import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { manualClock } from '../../src/core/clock.js';
import { parseConfig } from '../../src/config/load.js';
import { openStore } from '../../src/store/open.js';
import { startSink, type FakeServer } from '../fakes/http-fake.js';
import { inProcessServer, type InProcessServer } from '../helpers/server.js';
import { until } from '../helpers/wait.js';

const PATH_SECRET = 'T0KEN-IN-THE-PATH-3f9a';
const QUERY_SECRET = 'T0KEN-IN-THE-QUERY-77c1';

describe('secrets in destination URLs never leave', () => {
  let s: InProcessServer;
  let hook: FakeServer;
  before(async () => {
    hook = await startSink(200, {});
    hook.faults = () => ({ status: 400, body: { error: 'no such channel' } });
    s = await inProcessServer({
      config: `delivery: { max_retries: 0 }\nadapters: [ { name: hook, type: webhook, url: "${hook.url}/hooks/${PATH_SECRET}?token=${QUERY_SECRET}" } ]\n`,
    });
  });
  after(async () => {
    await s.stop();
    await hook.close();
  });

  test('a dead letter, the dashboard and the metrics show the adapter and scheme://host:port, never the path or query', async () => {
    await s.post('/v1/incidents', { element_id: 'olt-1', fault_class: 'LOS', root_cause_id: 'cut', severity: 'MAJOR' });
    const dead = await until(async () => (await s.get('/v1/dead-letters')).body.dead_letters[0], 10_000);
    assert.match(dead.attempts[0].error, new RegExp(`POST ${hook.url.replace(/[.]/g, '\\.')}: HTTP 400`), 'names where it went');
    const seen = [
      JSON.stringify((await s.get('/v1/dead-letters')).body),
      JSON.stringify((await s.get('/v1/dashboard')).body),
      (await s.app.inject({ method: 'GET', url: '/metrics' })).body,
    ];
    for (const text of seen) {
      assert.ok(!text.includes(PATH_SECRET) && !text.includes(QUERY_SECRET), `a secret leaked: ${text.slice(0, 300)}`);
    }
  });
});

test('a key that cannot be a header value is encoded, and the delivery is made instead of failing for ever', async () => {
  const hook = await startSink(200, {});
  const s = await inProcessServer({ config: `adapters: [ { name: hook, type: webhook, url: "${hook.url}/in" } ]\n` });
  try {
    const r = await s.post('/v2/enqueue', {
      routing_key: 'r',
      event_action: 'trigger',
      dedup_key: 'ключ-1',
      payload: { summary: 's', source: 'h', severity: 'error' },
    });
    assert.equal(r.status, 202);
    await until(() => hook.requests.length > 0, 10_000);
    assert.equal(hook.requests[0]!.headers['idempotency-key'], encodeURIComponent('pd:ключ-1:create:1'));
  } finally {
    await s.stop();
    await hook.close();
  }
});

test('store URLs and config errors never echo a password or a value', () => {
  assert.throws(
    () => openStore('postgres://admin:hunter2-s3cret@', manualClock()),
    (e: Error) => !e.message.includes('hunter2-s3cret') && e.message.includes('admin:***@'),
  );
  assert.throws(
    () => parseConfig('tenants:\n  - { id: a, tokens: [sup3r-secret-token-value-x] \n', 'onceonly.yaml'),
    (e: Error) => /not valid YAML or JSON at line \d+/.test(e.message) && !e.message.includes('sup3r-secret'),
  );
});
