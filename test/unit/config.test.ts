import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError, parseConfig } from '../../src/config/load.js';
import { ConfigHolder } from '../../src/config/holder.js';
import { defaultConfig } from '../../src/config/schema.js';
import { incidentTtlSeconds } from '../../src/inputs/incident/ttl.js';
import { tempDir } from '../helpers/tmp.js';

test('an empty file means every default', () => {
  assert.deepEqual(parseConfig('', 'x.yaml'), defaultConfig);
  assert.equal(defaultConfig.incidents.ttl_seconds, 3600);
  assert.equal(defaultConfig.violations.window_seconds, 300);
  assert.equal(defaultConfig.events.retention_seconds, 86400);
  assert.equal(defaultConfig.delivery.max_retries, 4);
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
  ['tenants: [ { id: acme, tokens: [t] } ]', /tenants: tenants are not supported by this version yet/],
  ['adapters: []', /adapters: adapters are not supported/],
  ['[1, 2]', /\(top level\)/],
  ['incidents: { ttl_seconds: 5', /not valid YAML or JSON/],
];
for (const [text, re] of bad) {
  test(`refused: ${text}`, () => {
    assert.throws(() => parseConfig(text, 'a.yaml'), (e: unknown) => e instanceof ConfigError && re.test(e.message));
  });
}

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
