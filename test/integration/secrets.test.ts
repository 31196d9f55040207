import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { manualClock } from '../../src/core/clock.js';
import { HttpFailure, http } from '../../src/delivery/http.js';
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

test('a config error never shows a value read from ${env:} or ${file:}, whatever field it lands in', () => {
  const dir = mkdtempSync(join(tmpdir(), 'onceonly-secret-'));
  try {
    const file = join(dir, 'header');
    writeFileSync(file, 'Bearer hdr-s3cret-value\r\nX-Injected: 1\n');
    // A header secret with a line break is refused at load, naming the field, not at the first delivery with the value in the error.
    assert.throws(
      () => parseConfig(`adapters: [ { name: h, type: webhook, url: "http://127.0.0.1:1/x", headers: { authorization: "\${file:${file}}" } } ]\n`, 'c.yaml'),
      (e: Error) => /adapters\.0\.headers\.authorization: must not hold a line break/.test(e.message) && !e.message.includes('hdr-s3cret'),
    );
    // Fields whose messages quote the value: a matcher, a time zone.
    const env = { ...process.env, OO_ZONE: 'Zone/env-s3cret-zone', OO_MATCH: 'element_id=~"env-s3cret-(("' };
    const saved = process.env;
    process.env = env;
    try {
      for (const text of [
        'maintenance:\n  - { name: w, matchers: ["element_id=olt"], time_intervals: [ { location: "${env:OO_ZONE}" } ] }\n',
        'maintenance:\n  - { name: w, matchers: ["${env:OO_MATCH}"], time_intervals: [ { weekdays: [saturday] } ] }\n',
      ]) {
        assert.throws(
          () => parseConfig(text, 'c.yaml'),
          (e: Error) => e.message.includes('invalid config') && !e.message.includes('env-s3cret') && e.message.includes('***'),
        );
      }
    } finally {
      process.env = saved;
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a request the HTTP client will not build fails without quoting its header or URL', async () => {
  for (const [url, headers] of [
    ['http://127.0.0.1:1/x', { authorization: 'Bearer rt-s3cret\r\nX: y' }],
    ['http://[::1/rt-s3cret-path', {}],
  ] as const) {
    const err = await http(url, { method: 'POST', headers, body: '{}' }).then(
      () => null,
      (e: unknown) => e,
    );
    assert.ok(err instanceof HttpFailure, String(err));
    assert.equal(err.result.ok, false);
    const text = JSON.stringify(err.result);
    assert.ok(!text.includes('rt-s3cret'), text);
    assert.match(text, /could not be built/);
  }
});
