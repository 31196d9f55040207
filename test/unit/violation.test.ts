import { test } from 'node:test';
import assert from 'node:assert/strict';
import { violationKey, windowIndex } from '../../src/core/violation.js';
import { defaultConfig } from '../../src/config/schema.js';
import { parseConfig } from '../../src/config/load.js';
import { classify } from '../../src/engine/violations.js';

// Expected keys computed outside the code under test:
//   printf '%s' 'etch-line-3|nelson_1|5900000' | sha1sum      (1770000000 / 300 = 5900000)
//   printf '%s' 'etch-line-3|nelson_1|5900001' | sha1sum
//   printf '%s' 'p\|1|we\\zone|5900000' | sha1sum             (fields "p|1" and "we\zone", escaped)
test('violation keys: windowed SHA-1 with escaped fields', () => {
  const v = { process_id: 'etch-line-3', rule_id: 'nelson_1', timestamp: 1770000000 };
  assert.equal(violationKey(v, 300), 'c009aa8442524c25942fae6e7135b7aa2aaec015');
  assert.equal(violationKey({ ...v, timestamp: 1770000299.9 }, 300), 'c009aa8442524c25942fae6e7135b7aa2aaec015');
  assert.equal(violationKey({ ...v, timestamp: 1770000300 }, 300), 'd1d04bb5bfb55e703d5d2469b2e1fc3eaccafc97');
  assert.equal(violationKey({ process_id: 'p|1', rule_id: 'we\\zone', timestamp: 1770000000 }, 300), 'edac51756310c17225f82dd92953cdc08f506564');
  assert.equal(windowIndex(1770000299, 300), 5900000);
});

test('every rule of the default table is classified, and an unknown rule is SPC-UNKNOWN MINOR', () => {
  const cfg = defaultConfig.violations;
  assert.deepEqual(classify(cfg, 'nelson_1'), { alarm_code: 'SPC-BEYOND-3S', severity: 'CRITICAL' });
  assert.deepEqual(classify(cfg, 'nelson_2'), { alarm_code: 'SPC-SHIFT-9', severity: 'MAJOR' });
  assert.deepEqual(classify(cfg, 'nelson_3'), { alarm_code: 'SPC-TREND-6', severity: 'MAJOR' });
  assert.deepEqual(classify(cfg, 'we_zone_a'), { alarm_code: 'SPC-2OF3-2S', severity: 'MAJOR' });
  assert.deepEqual(classify(cfg, 'we_zone_b'), { alarm_code: 'SPC-4OF5-1S', severity: 'MINOR' });
  assert.deepEqual(classify(cfg, 'nelson_8'), { alarm_code: 'SPC-UNKNOWN', severity: 'MINOR' });
  assert.deepEqual(classify(cfg, 'toString'), { alarm_code: 'SPC-UNKNOWN', severity: 'MINOR' }, 'no prototype keys');
  assert.deepEqual(cfg.actions, {
    CRITICAL: { route: true, notify: true },
    MAJOR: { route: true, notify: false },
    MINOR: { route: true, notify: false },
    INFO: { route: false, notify: false },
  });
});

test('the rule and action tables come from config, validated', () => {
  const cfg = parseConfig(
    'violations: { window_seconds: 60, rules: { cusum: { alarm_code: SPC-CUSUM, severity: INFO } }, actions: { MINOR: { route: false, notify: false } } }',
    'c.yaml',
  ).violations;
  assert.deepEqual(classify(cfg, 'cusum'), { alarm_code: 'SPC-CUSUM', severity: 'INFO' });
  assert.deepEqual(classify(cfg, 'nelson_1'), { alarm_code: 'SPC-UNKNOWN', severity: 'MINOR' }, 'a given table replaces the default one');
  assert.deepEqual(cfg.actions.MINOR, { route: false, notify: false });
  assert.deepEqual(cfg.actions.CRITICAL, { route: true, notify: true });
  assert.throws(() => parseConfig('violations: { rules: { x: { alarm_code: A, severity: LOUD } } }', 'c.yaml'), /violations\.rules\.x\.severity/);
  assert.throws(() => parseConfig('violations: { actions: { MAJOR: { route: yes } } }', 'c.yaml'), /violations\.actions\.MAJOR/);
  assert.throws(
    () => parseConfig('violations: { actions: { URGENT: { route: true, notify: true } } }', 'c.yaml'),
    /violations\.actions\.URGENT: unknown field/,
  );
});
