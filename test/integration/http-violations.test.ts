import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { systemClock } from '../../src/core/clock.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { inProcessServer, type InProcessServer } from '../helpers/server.js';

const v = (over: Record<string, unknown> = {}) => ({
  process_id: 'etch-line-3',
  rule_id: 'nelson_1',
  timestamp: 1770000000,
  value: 12.9,
  center: 10,
  ucl: 12.5,
  lcl: 7.5,
  ...over,
});

describe('HTTP: SPC violations', () => {
  let s: InProcessServer;
  before(async () => {
    s = await inProcessServer({
      config: 'violations: { window_seconds: 300, actions: { MINOR: { route: false, notify: false } } }',
    });
  });
  after(() => s.stop());

  test('the same violation ten times is one CREATE', async () => {
    const answers: Array<{ decision: string; key: string }> = [];
    for (let i = 0; i < 10; i++) answers.push((await s.post('/v1/violations', v({ timestamp: 1770000000 + i * 10, value: 13 + i }))).body);
    assert.deepEqual(answers[0], {
      decision: 'CREATE',
      key: 'c009aa8442524c25942fae6e7135b7aa2aaec015',
      alarm_code: 'SPC-BEYOND-3S',
      severity: 'CRITICAL',
      muted: null,
    });
    assert.ok(answers.slice(1).every((a) => a.decision === 'SUPPRESS' && a.key === answers[0]!.key));
  });

  // Planted fault it catches: the claim kept one window (300 s) instead of two; the late sample was then a second CREATE.
  test('a claim lives two windows: a late sample of its window, 400 s after the first, is still SUPPRESS', async () => {
    const sample = (over: Record<string, unknown>) => v({ process_id: 'late-line-7', timestamp: 1770000300, ...over });
    const first = (await s.post('/v1/violations', sample({}))).body as { decision: string; key: string };
    assert.equal(first.decision, 'CREATE');
    s.clock.advance(400_000);
    const late = (await s.post('/v1/violations', sample({ timestamp: 1770000310, value: 13.5 }))).body as { decision: string; key: string };
    assert.deepEqual([late.decision, late.key], ['SUPPRESS', first.key], 'a sample of the same window arriving 400 s late');
    s.clock.advance(200_001);
    const after = (await s.post('/v1/violations', sample({}))).body as { decision: string; key: string };
    assert.deepEqual([after.decision, after.key], ['CREATE', first.key], 'past two windows the claim is gone: a new alarm');
  });

  test('both sides of a window boundary are two alarms', async () => {
    const left = await s.post('/v1/violations', v({ process_id: 'litho-1', timestamp: 1770000299 }));
    const right = await s.post('/v1/violations', v({ process_id: 'litho-1', timestamp: 1770000300 }));
    assert.equal(left.body.decision, 'CREATE');
    assert.equal(right.body.decision, 'CREATE');
    assert.notEqual(left.body.key, right.body.key);
  });

  test('every rule is classified, an unknown one is SPC-UNKNOWN MINOR, and the decision table is applied', async () => {
    const table: Array<[string, string, string]> = [
      ['nelson_1', 'SPC-BEYOND-3S', 'CRITICAL'],
      ['nelson_2', 'SPC-SHIFT-9', 'MAJOR'],
      ['nelson_3', 'SPC-TREND-6', 'MAJOR'],
      ['we_zone_a', 'SPC-2OF3-2S', 'MAJOR'],
      ['we_zone_b', 'SPC-4OF5-1S', 'MINOR'],
      ['nelson_7', 'SPC-UNKNOWN', 'MINOR'],
    ];
    for (const [rule, code, severity] of table) {
      const r = await s.post('/v1/violations', v({ process_id: 'cmp-2', rule_id: rule }));
      assert.deepEqual([r.body.decision, r.body.alarm_code, r.body.severity], ['CREATE', code, severity], rule);
    }
    const metrics = (await s.app.inject({ url: '/metrics' })).payload;
    assert.match(metrics, /onceonly_violation_decisions_total\{decision="CREATE",severity="CRITICAL",action="route_and_notify"\} [1-9]/);
    assert.match(metrics, /onceonly_violation_decisions_total\{decision="CREATE",severity="MAJOR",action="route"\} 3/);
    assert.match(metrics, /onceonly_violation_decisions_total\{decision="CREATE",severity="MINOR",action="log"\} 2/, 'MINOR only logs, as configured');
    // Routed alarms are in the outbox, written with their claim; log-only ones are not.
    const store = new SqliteStore(join(s.dir, 'onceonly.db'), systemClock);
    const cmp = (await store.queries.listOutbox()).filter((e) => e.kind === 'violation' && (e.data as { process_id: string }).process_id === 'cmp-2');
    await store.close();
    assert.deepEqual(cmp.map((e) => e.severity).sort(), ['CRITICAL', 'MAJOR', 'MAJOR', 'MAJOR']);
    assert.ok(cmp.every((e) => e.action === 'create' && e.data.notify === (e.severity === 'CRITICAL')));
  });

  const bad: Array<[string, unknown, string]> = [
    ['missing process_id', { ...v(), process_id: undefined }, 'process_id'],
    ['empty rule_id', v({ rule_id: '' }), 'rule_id'],
    ['timestamp as a string', v({ timestamp: '1770000000' }), 'timestamp'],
    ['negative timestamp', v({ timestamp: -5 }), 'timestamp'],
    ['timestamp in milliseconds', v({ timestamp: 1_770_000_000_000 }), 'timestamp'],
    ['value missing', { ...v(), value: undefined }, 'value'],
    ['ucl null', v({ ucl: null }), 'ucl'],
    ['lcl as text', v({ lcl: 'low' }), 'lcl'],
    ['unknown field', v({ chart: 'xbar' }), 'chart'],
    ['an array', [v()], ''],
  ];
  test('malformed violations: 400 naming the field, nothing claimed', async () => {
    for (const [name, body, field] of bad) {
      const r = await s.post('/v1/violations', body);
      assert.equal(r.status, 400, name);
      if (name === 'timestamp in milliseconds') assert.match(r.body.error.message, /epoch seconds; this looks like milliseconds/);
      assert.ok(
        r.body.error.issues.some((i: { path: string }) => i.path === field),
        `${name}: ${JSON.stringify(r.body.error.issues)}`,
      );
    }
    // Nothing was claimed by the refused bodies: this process's first valid violation still CREATEs.
    assert.equal((await s.post('/v1/violations', v({ process_id: 'fresh-9' }))).body.decision, 'CREATE');
    const metrics = (await s.app.inject({ url: '/metrics' })).payload;
    assert.match(metrics, new RegExp(`onceonly_requests_rejected_total\\{route="/v1/violations",code="invalid_input"\\} ${bad.length}`));
  });
});
