// biome-ignore-all lint/suspicious/noTemplateCurlyInString: config secret references are written ${env:…} and ${file:…} on purpose.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { parse } from 'yaml';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { ConfigError, parseConfig } from '../../src/config/load.js';
import { ConfigHolder } from '../../src/config/holder.js';
import { defaultConfig, LIMIT_DEFAULTS } from '../../src/config/schema.js';
import { incidentTtlSeconds } from '../../src/inputs/incident/ttl.js';
import { backoffDelay } from '../../src/delivery/backoff.js';
import { tempDir } from '../helpers/tmp.js';
const root = fileURLToPath(new URL('../../', import.meta.url));
// Adapters register their config schemas when their module loads, as the server and the library entry do.
import '../../src/delivery/adapters/index.js';

test('an empty file means every default', () => {
  assert.deepEqual(parseConfig('', 'x.yaml'), defaultConfig);
  assert.equal(defaultConfig.incidents.ttl_seconds, 3600);
  assert.equal(defaultConfig.violations.window_seconds, 300);
  assert.equal(defaultConfig.events.retention_seconds, 86400);
  assert.equal(defaultConfig.delivery.max_retries, 23);
});

test('every bound in limits has its documented default, and one set alone keeps the others', () => {
  assert.deepEqual(defaultConfig.limits, LIMIT_DEFAULTS);
  assert.deepEqual(parseConfig('limits: { alerts_per_post: 5 }', 'a.yaml').limits, { ...LIMIT_DEFAULTS, alerts_per_post: 5 });
  // docs/configuration.md's block lists every one at its default; docs/security.md's table names each.
  const block = /```yaml\n(limits:\n[\s\S]*?)```/.exec(readFileSync(join(root, 'docs/configuration.md'), 'utf8'))?.[1];
  assert.ok(block, 'docs/configuration.md has a limits block');
  assert.deepEqual(parseConfig(block, 'limits.yaml').limits, LIMIT_DEFAULTS);
  assert.deepEqual(Object.keys((parse(block) as { limits: object }).limits).sort(), Object.keys(LIMIT_DEFAULTS).sort());
  const table = readFileSync(join(root, 'docs/security.md'), 'utf8');
  for (const key of Object.keys(LIMIT_DEFAULTS)) assert.match(table, new RegExp(`\`limits\\.${key}\``), `docs/security.md names limits.${key}`);
});

test('the default retry budget rides out an hour-long outage, and no single wait passes 5 minutes', () => {
  const d = defaultConfig.delivery;
  const policy = { baseMs: d.base_delay_ms, maxMs: d.max_delay_ms };
  const waits = (u: number) => Array.from({ length: d.max_retries }, (_, i) => backoffDelay(i, policy, () => u));
  const least = waits(0).reduce((a, b) => a + b, 0);
  const most = waits(0.999_999).reduce((a, b) => a + b, 0);
  assert.ok(least >= 3_600_000, `the retries wait ${least / 1000} s at the least`);
  assert.equal(least, 3_615_500, 'as docs/adapters.md works it out');
  assert.ok(Math.max(...waits(0.999_999)) <= 300_000, 'no wait is longer than 5 minutes, jitter included');
  assert.ok(most < 4_520_000);
});

test('YAML and JSON both parse', () => {
  assert.equal(parseConfig('incidents: { ttl_seconds: 60 }', 'a.yaml').incidents.ttl_seconds, 60);
  assert.equal(parseConfig('{"incidents": {"ttl_seconds": 61}}', 'a.json').incidents.ttl_seconds, 61);
});

const bad: Array<[string, RegExp]> = [
  ['incidents: { ttl_seconds: 0 }', /a\.yaml: invalid config: incidents\.ttl_seconds/],
  ['incidents: { ttl_seconds: 1.5 }', /incidents\.ttl_seconds/],
  ['incidents: { ttl_seconds: "1h" }', /incidents\.ttl_seconds/],
  ['incident: {}', /incident: unknown field/],
  ['incidents: { ttl_overrides: [ { fault_class: X, element_prefix: y, ttl_seconds: 5 } ] }', /incidents\.ttl_overrides\.0: give exactly one/],
  ['incidents: { ttl_overrides: [ { ttl_seconds: 5 } ] }', /incidents\.ttl_overrides\.0: give exactly one/],
  ['delivery: { max_retries: -1 }', /delivery\.max_retries/],
  ['redis: { shards: 0 }', /redis\.shards/],
  ['redis: { shards: 16385 }', /redis\.shards/],
  ['redis: { shards: 2.5 }', /redis\.shards/],
  ['redis: { shard: 64 }', /redis\.shard: unknown field/],
  ['tenants: [ { id: acme, tokens: [short] } ]', /tenants\.0\.tokens\.0: use at least 16 characters/],
  ['tenants: [ { id: "a b", tokens: [a-long-random-token] } ]', /tenants\.0\.id: must be 1\.\.128 letters/],
  ['tenants: [ { id: acme, tokens: [] } ]', /tenants\.0\.tokens/],
  ['tenants: [ { id: acme, tokens: [a-long-random-token] }, { id: acme, tokens: [another-long-token] } ]', /tenants\.1\.id: tenant id "acme" is used twice/],
  [
    'tenants: [ { id: a, tokens: [a-long-random-token] }, { id: b, tokens: [a-long-random-token] } ]',
    /tenants\.1\.tokens\.0: this token is already given to a tenant/,
  ],
  ['tenants: [ { id: a, tokens: [a-long-random-token], rate_limit: { per_second: 0 } } ]', /tenants\.0\.rate_limit\.per_second/],
  ['delivery: { base_delay_ms: 300000 }', /delivery\.max_delay_ms: max_delay_ms must be at least base_delay_ms/],
  ['adapters: [ { name: h, type: carrier-pigeon, url: "http://x" } ]', /adapters\.0\.type/],
  ['adapters: [ { name: h, type: webhook } ]', /adapters\.0\.url/],
  ['adapters: [ { name: h, type: webhook, url: "ftp://x/y" } ]', /adapters\.0\.url: must be an http/],
  ['adapters: [ { name: "h h", type: webhook, url: "http://x" } ]', /adapters\.0\.name: must be 1\.\.64 letters/],
  ['adapters: [ { name: h, type: webhook, url: "http://x", colour: red } ]', /adapters\.0\.colour: unknown field/],
  ['adapters: [ { name: h, type: webhook, url: "http://x", secret: short } ]', /adapters\.0\.secret: use at least 16/],
  ['adapters: [ { name: h, type: webhook, url: "http://x" }, { name: h, type: slack, url: "http://y" } ]', /adapters\.1\.name: adapter name "h" is used twice/],
  ['adapters: [ { name: s, type: servicenow, instance_url: "http://x", username: u } ]', /adapters\.0\.password/],
  ['adapters: [ { name: j, type: jira, base_url: "http://x", username: u, api_token: t } ]', /adapters\.0\.project/],
  ['adapters: [ { name: p, type: pagerduty } ]', /adapters\.0\.routing_key/],
  ['adapters: [ { name: m, type: mqtt, url: "http://x" } ]', /adapters\.0\.url: must be an mqtt/],
  ['adapters: [ { name: m, type: mqtt, qos: 3 } ]', /adapters\.0\.qos/],
  [
    'delivery: { lease_ms: 5000 }\nadapters: [ { name: h, type: webhook, url: "http://x" } ]',
    /adapters\.0\.timeout_ms: must be shorter than delivery\.lease_ms \(5000\)/,
  ],
  ['adapters: [ { name: h, type: webhook, url: "http://x", kinds: [tickets] } ]', /adapters\.0\.kinds\.0/],
  ['maintenance: [ { name: w, matchers: [], time_intervals: [ { weekdays: [saturday] } ] } ]', /maintenance\.0\.matchers: a window needs at least one matcher/],
  [
    'maintenance: [ { name: w, matchers: [\'severity=~"(x"\'], time_intervals: [ { weekdays: [saturday] } ] } ]',
    /maintenance\.0\.matchers\.0: matcher severity/,
  ],
  [
    'maintenance: [ { name: w, matchers: [\'kind="incident"\'], time_intervals: [ { weekdays: [caturday] } ] } ]',
    /maintenance\.0\.time_intervals\.0: weekdays/,
  ],
  ['maintenance: [ { name: w, matchers: [\'kind="incident"\'], time_intervals: [ { location: Mars/Base } ] } ]', /maintenance\.0\.time_intervals\.0: location/],
  ['maintenance: [ { name: w, matchers: [\'kind="incident"\'], time_intervals: [] } ]', /maintenance\.0\.time_intervals/],
  [
    'maintenance: [ { name: w, matchers: [\'kind="incident"\'], time_intervals: [ {} ] }, { name: w, matchers: [\'kind="event"\'], time_intervals: [ {} ] } ]',
    /maintenance\.1\.name: the name w is used twice/,
  ],
  ['inhibit_rules: [ { source_matchers: [], target_matchers: [\'severity="MINOR"\'] } ]', /inhibit_rules\.0\.source_matchers/],
  ['inhibit_rules: [ { source_matchers: [\'fault_class="NODE_DOWN"\'], target_matchers: [\'severity=~"("\'] } ]', /inhibit_rules\.0\.target_matchers\.0/],
  [
    'inhibit_rules: [ { source_matchers: [\'a="b"\'], target_matchers: [\'c="d"\'], equal: [root-cause] } ]',
    /inhibit_rules\.0\.equal\.0: must be a label name/,
  ],
  ['heartbeats: [ { name: "bad name", interval_seconds: 60 } ]', /heartbeats\.0\.name: must be 1\.\.128 letters/],
  ['heartbeats: [ { name: backup, interval_seconds: 0 } ]', /heartbeats\.0\.interval_seconds/],
  ['http: { headers_timeout_ms: 20000, request_timeout_ms: 10000 }', /http\.headers_timeout_ms: headers_timeout_ms must not be longer than request_timeout_ms/],
  ['http: { request_timeout_ms: 0 }', /http\.request_timeout_ms/],
  // Past what a date can hold, every read of the heartbeat answered 500: refused at load instead.
  ['heartbeats: [ { name: backup, interval_seconds: 9000000000000 } ]', /heartbeats\.0\.interval_seconds: .*315360000/],
  ['heartbeats: [ { name: backup, interval_seconds: 60, grace_seconds: 9000000000000 } ]', /heartbeats\.0\.grace_seconds/],
  ['heartbeats: [ { name: backup } ]', /heartbeats\.0\.interval_seconds/],
  ['heartbeats: [ { name: backup, interval_seconds: 60, severity: LOUD } ]', /heartbeats\.0\.severity: must be one of CRITICAL/],
  [
    'heartbeats: [ { name: backup, interval_seconds: 60 }, { name: backup, interval_seconds: 30 } ]',
    /heartbeats\.1\.name: heartbeat "backup" is configured twice/,
  ],
  ['heartbeats: [ { name: backup, interval_seconds: 60, tenant: acme } ]', /heartbeats\.0\.tenant: no tenants are configured/],
  [
    'tenants: [ { id: acme, tokens: [a-long-random-token-1] } ]\nheartbeats: [ { name: backup, interval_seconds: 60 } ]',
    /heartbeats\.0\.tenant: required once tenants are configured/,
  ],
  [
    'tenants: [ { id: acme, tokens: [a-long-random-token-1] } ]\nheartbeats: [ { name: backup, interval_seconds: 60, tenant: beta } ]',
    /heartbeats\.0\.tenant: no tenant "beta" is configured/,
  ],
  ['limits: { body_bytes: 100 }', /limits\.body_bytes/],
  ['limits: { batch_lines: 0 }', /limits\.batch_lines/],
  ['limits: { alerts_per_post: 1.5 }', /limits\.alerts_per_post/],
  ['limits: { silences_per_tenant: -1 }', /limits\.silences_per_tenant/],
  ['limits: { dashboard_unsent_bytes: 10 }', /limits\.dashboard_unsent_bytes/],
  ['limits: { rate_limit_buckets: 5 }', /limits\.rate_limit_buckets/],
  ['limits: { streams: 5 }', /limits.*streams/],
  ['[1, 2]', /\(top level\)/],
  ['incidents: { ttl_seconds: 5', /not valid YAML or JSON/],
];
for (const [text, re] of bad) {
  test(`refused: ${text}`, () => {
    assert.throws(
      () => parseConfig(text, 'a.yaml'),
      (e: unknown) => e instanceof ConfigError && re.test(e.message),
    );
  });
}

test('every adapter type parses with its defaults filled in', () => {
  const cfg = parseConfig(
    `adapters:
  - { name: hook, type: webhook, url: "http://127.0.0.1:9911/hook" }
  - { name: snow, type: servicenow, instance_url: "https://x.service-now.com", username: u, password: p }
  - { name: jira, type: jira, base_url: "https://x.atlassian.net", project: OPS, username: u, api_token: t }
  - { name: pd, type: pagerduty, routing_key: R0UT1NG }
  - { name: mes, type: mqtt }
  - { name: chat, type: slack, url: "https://hooks.slack.com/services/T/B/X" }`,
    'a.yaml',
  );
  assert.deepEqual(
    cfg.adapters.map((a) => [a.name, a.type, a.timeout_ms]),
    [
      ['hook', 'webhook', 10000],
      ['snow', 'servicenow', 10000],
      ['jira', 'jira', 10000],
      ['pd', 'pagerduty', 10000],
      ['mes', 'mqtt', 10000],
      ['chat', 'slack', 10000],
    ],
  );
  const mes = cfg.adapters[4]!;
  assert.ok(mes.type === 'mqtt' && mes.url === 'mqtt://127.0.0.1:1883' && mes.qos === 1 && mes.retain);
  const pd = cfg.adapters[3]!;
  assert.ok(pd.type === 'pagerduty' && pd.url === 'https://events.pagerduty.com/v2/enqueue');
  assert.deepEqual(defaultConfig.adapters, []);
});

test('TTL overrides: first match wins, by fault_class or element prefix', () => {
  const cfg = parseConfig(
    'incidents: { ttl_seconds: 100, ttl_overrides: [ { fault_class: FLAP, ttl_seconds: 10 }, { element_prefix: "lab-", ttl_seconds: 20 } ] }',
    'a.yaml',
  ).incidents;
  const id = (element_id: string, fault_class: string) => ({ element_id, fault_class, root_cause_id: 'r' });
  assert.equal(incidentTtlSeconds(cfg, id('lab-1', 'FLAP')), 10);
  assert.equal(incidentTtlSeconds(cfg, id('lab-1', 'LOS')), 20);
  assert.equal(incidentTtlSeconds(cfg, id('core-1', 'LOS')), 100);
  assert.equal(incidentTtlSeconds(cfg, id('core-1', 'flap')), 100); // exact, case-sensitive
});

test('reload swaps the whole config at once, and a bad file leaves the old one in force', () => {
  const dir = tempDir();
  try {
    const path = join(dir.path, 'c.yaml');
    writeFileSync(path, 'incidents: { ttl_seconds: 100 }');
    const holder = ConfigHolder.fromFile(path);
    const first = holder.current;
    writeFileSync(path, 'incidents: { ttl_seconds: 200 }\nviolations: { window_seconds: 60 }');
    holder.reload();
    assert.notEqual(holder.current, first);
    assert.equal(holder.current.incidents.ttl_seconds, 200);
    assert.equal(holder.current.violations.window_seconds, 60);
    assert.equal(first.incidents.ttl_seconds, 100, 'the old object is never mutated');
    const good = holder.current;
    writeFileSync(path, 'incidents: { ttl_seconds: 300 }\nviolations: { window_seconds: -1 }');
    assert.throws(() => holder.reload(), /violations\.window_seconds/);
    assert.equal(holder.current, good, 'nothing of the bad file was taken, not even its valid part');
  } finally {
    dir.remove();
  }
});

test('a reload that changes a field read only at start says so, until the value in force is the started one again', () => {
  const dir = tempDir();
  try {
    const path = join(dir.path, 'c.yaml');
    writeFileSync(path, 'delivery: { lease_ms: 60000 }');
    const holder = ConfigHolder.fromFile(path);
    assert.deepEqual(holder.restartPending, []);
    writeFileSync(path, 'delivery: { lease_ms: 90000 }\nlimits: { body_bytes: 1048576 }\nincidents: { ttl_seconds: 60 }\nhttp: { request_timeout_ms: 30000 }');
    holder.reload();
    assert.deepEqual(holder.restartPending, ['delivery.lease_ms', 'limits.body_bytes', 'http'], 'the TTL acts at once; these need a restart');
    writeFileSync(path, 'delivery: { lease_ms: 60000 }\nincidents: { ttl_seconds: 60 }');
    holder.reload();
    assert.deepEqual(holder.restartPending, [], 'back to the values the server started with');
  } finally {
    dir.remove();
  }
});

// In a fresh process that imports nothing but the library entry: this file imports the adapters itself (for the
// config tests above), so a check made here would pass even if the entry registered none.
test('the library entry alone registers every adapter type: a config naming all six parses through openDeduplicator', () => {
  const entry = pathToFileURL(join(root, 'src/index.ts')).href;
  const program = `
    const { openDeduplicator } = await import(${JSON.stringify(entry)});
    const dedup = openDeduplicator({ store: 'memory:', config: { adapters: [
      { name: 'h', type: 'webhook', url: 'http://127.0.0.1:9/x' },
      { name: 'p', type: 'pagerduty', routing_key: 'r'.repeat(32) },
      { name: 's', type: 'slack', url: 'http://127.0.0.1:9/services/T/B/X' },
      { name: 'n', type: 'servicenow', instance_url: 'http://127.0.0.1:9', username: 'u', password: 'p' },
      { name: 'j', type: 'jira', base_url: 'http://127.0.0.1:9', project: 'NOC', username: 'u', api_token: 't' },
      { name: 'm', type: 'mqtt', url: 'mqtt://127.0.0.1:9' },
    ] } });
    await dedup.close();
    console.log('parsed');`;
  const r = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', program], { cwd: root, encoding: 'utf8', timeout: 60_000 });
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout.trim(), 'parsed');
});

test('secret references: ${env:NAME} and ${file:/path}, whole or inside a string; a missing one names the field and the source, never a value', () => {
  const dir = tempDir();
  try {
    const file = join(dir.path, 'token');
    writeFileSync(file, 's3cret-from-a-file-value\n');
    process.env.OO_UNIT_SLACK = 'T000/B000/xyz';
    const c = parseConfig(
      `tenants: [ { id: a, tokens: ["\${file:${file}}"] } ]\nadapters: [ { name: chat, type: slack, url: "https://hooks.example.net/services/\${env:OO_UNIT_SLACK}" }, { name: h, type: webhook, url: "http://x/a", headers: { X-Lit: "$\${env:NOT_A_REF}" } } ]\n`,
      'f.yaml',
    );
    assert.deepEqual(c.tenants[0]?.tokens, ['s3cret-from-a-file-value'], 'one trailing line break dropped');
    assert.equal((c.adapters[0] as { url: string }).url, 'https://hooks.example.net/services/T000/B000/xyz');
    assert.equal((c.adapters[1] as { headers: Record<string, string> }).headers['X-Lit'], '${env:NOT_A_REF}', '$${ is a literal');
    delete process.env.OO_UNIT_SLACK;
    assert.throws(
      () => parseConfig('adapters: [ { name: chat, type: slack, url: "https://h/${env:OO_UNIT_SLACK}" } ]\n', 'f.yaml'),
      (e: Error) => e instanceof ConfigError && /adapters\.0\.url: environment variable OO_UNIT_SLACK .* is not set/.test(e.message),
    );
    assert.throws(
      () => parseConfig(`tenants: [ { id: a, tokens: ["\${file:${join(dir.path, 'missing')}}"] } ]\n`, 'f.yaml'),
      (e: Error) => e instanceof ConfigError && /tenants\.0\.tokens\.0: cannot read .*missing .*ENOENT/.test(e.message),
    );
    assert.throws(
      () => parseConfig('tenants: [ { id: a, tokens: ["${env:9bad name}"] } ]\n', 'f.yaml'),
      (e: Error) => e instanceof ConfigError && /not a valid environment variable name/.test(e.message),
    );
  } finally {
    dir.remove();
  }
});
