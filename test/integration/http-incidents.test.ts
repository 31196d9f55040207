import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { inProcessServer, type InProcessServer } from '../helpers/server.js';

const incident = (over: Record<string, unknown> = {}) => ({
  element_id: 'edge-rtr-01',
  fault_class: 'LINK_DOWN',
  root_cause_id: 'ring-7',
  severity: 'MAJOR',
  ...over,
});
// printf '%s' 'edge-rtr-01|LINK_DOWN|ring-7' | sha256sum
const KEY = 'dedup:66dd1630e033ad3dc78d4776530535b1';

describe('HTTP: incidents on SQLite', () => {
  let s: InProcessServer;
  before(async () => {
    s = await inProcessServer({
      config: [
        'incidents:',
        '  ttl_seconds: 600',
        '  race_window_ms: 0',
        '  ttl_overrides:',
        '    - fault_class: FLAP',
        '      ttl_seconds: 30',
        '    - element_prefix: "lab-"',
        '      ttl_seconds: 60',
      ].join('\n'),
    });
  });
  after(() => s.stop());

  test('lifecycle CREATE → SUPPRESS → UPDATE(severity) → SUPPRESS → UPDATE(cleared) → close → CREATE', async () => {
    const steps: Array<[Record<string, unknown>, string, string]> = [
      [incident(), 'CREATE', 'new'],
      [incident({ summary: 'ring down again', details: { olt: 3 } }), 'SUPPRESS', 'unchanged'],
      [incident({ severity: 'CRITICAL' }), 'UPDATE', 'severity'],
      [incident({ severity: 'CRITICAL', summary: 'other words' }), 'SUPPRESS', 'unchanged'],
      [incident({ severity: 'CRITICAL', cleared: true }), 'UPDATE', 'cleared'],
    ];
    for (const [body, expected, reason] of steps) {
      s.clock.advance(1000);
      const r = await s.post('/v1/incidents', body);
      assert.equal(r.status, 200);
      assert.deepEqual(r.body, { decision: expected, reason, dedup_key: KEY, provisional: false, muted: null });
    }
    const view = await s.get(`/v1/incidents/${KEY}`);
    assert.equal(view.status, 200);
    assert.deepEqual(view.body, {
      dedup_key: KEY,
      element_id: 'edge-rtr-01',
      fault_class: 'LINK_DOWN',
      root_cause_id: 'ring-7',
      summary: '',
      labels: {},
      severity: 'CRITICAL',
      cleared: true,
      created_at: new Date(s.clock.now() - 4000).toISOString(),
      last_seen_at: new Date(s.clock.now()).toISOString(),
      refires: 4,
      updates: 2,
      expires_at: new Date(s.clock.now() + 600_000).toISOString(),
    });
    assert.equal((await s.del(`/v1/incidents/${KEY}`)).status, 204);
    assert.equal((await s.get(`/v1/incidents/${KEY}`)).status, 404);
    const del404 = await s.del(`/v1/incidents/${KEY}`);
    assert.equal(del404.status, 404);
    assert.equal(del404.body.error.code, 'not_found');
    assert.equal((await s.post('/v1/incidents', incident())).body.decision, 'CREATE');

    const metrics = (await s.app.inject({ url: '/metrics' })).payload;
    assert.match(metrics, /onceonly_incident_decisions_total\{decision="CREATE",reason="new"\} 2/);
    assert.match(metrics, /onceonly_incident_decisions_total\{decision="UPDATE",reason="severity"\} 1/);
    assert.match(metrics, /onceonly_incident_decisions_total\{decision="UPDATE",reason="cleared"\} 1/);
    assert.match(metrics, /onceonly_incident_decisions_total\{decision="SUPPRESS",reason="unchanged"\} 2/);
  });

  test('TTL: default, per fault_class and per element prefix, sliding on every arrival', async () => {
    const flap = incident({ element_id: 'core-1', fault_class: 'FLAP' });
    const lab = incident({ element_id: 'lab-7', fault_class: 'LOS' });
    const plain = incident({ element_id: 'core-2', fault_class: 'LOS' });
    for (const b of [flap, lab, plain]) assert.equal((await s.post('/v1/incidents', b)).body.decision, 'CREATE');
    s.clock.advance(29_000); // t=29 s: flap slides to expire at 59 s
    assert.equal((await s.post('/v1/incidents', flap)).body.decision, 'SUPPRESS');
    s.clock.advance(29_000); // t=58 s: flap slides to 88 s
    assert.equal((await s.post('/v1/incidents', flap)).body.decision, 'SUPPRESS');
    s.clock.advance(3_000); // t=61 s: lab (60 s, never refreshed) has expired
    assert.equal((await s.post('/v1/incidents', lab)).body.decision, 'CREATE');
    s.clock.advance(30_000); // t=91 s: flap expired at 88 s; plain (600 s) slides to 691 s
    assert.equal((await s.post('/v1/incidents', flap)).body.decision, 'CREATE');
    assert.equal((await s.post('/v1/incidents', plain)).body.decision, 'SUPPRESS');
    s.clock.advance(599_000); // t=690 s: still live
    assert.equal((await s.post('/v1/incidents', plain)).body.decision, 'SUPPRESS');
    s.clock.advance(600_000); // t=1290 s: past 690 + 600
    assert.equal((await s.post('/v1/incidents', plain)).body.decision, 'CREATE');
  });

  test('the answer carries the reason: a premature expiry is seen by the producer, not only in metrics', async () => {
    const b = incident({ element_id: 'reason-1', fault_class: 'FLAP' });
    const answer = async (body: object) => {
      const r = (await s.post('/v1/incidents', body)).body;
      return `${r.decision}/${r.reason}`;
    };
    assert.equal(await answer(b), 'CREATE/new');
    s.clock.advance(5_000); // past the race window
    assert.equal(await answer(b), 'SUPPRESS/unchanged');
    assert.equal(await answer({ ...b, severity: 'CRITICAL' }), 'UPDATE/severity');
    assert.equal(await answer({ ...b, severity: 'CRITICAL', cleared: true }), 'UPDATE/cleared');
    assert.equal(await answer({ ...b, severity: 'CRITICAL' }), 'UPDATE/reopened');
    s.clock.advance(61_000); // FLAP lives 60 s: expired, unclosed, within the grace
    assert.equal(await answer(b), 'CREATE/expired');
    const key = (await s.post('/v1/incidents', b)).body.dedup_key;
    assert.equal((await s.del(`/v1/incidents/${key}`)).status, 204);
    assert.equal(await answer(b), 'CREATE/new', 'a close is not an expiry');
  });

  test('malformed keys and unknown routes answer in the error shape', async () => {
    const bad = await s.get('/v1/incidents/not-a-key');
    assert.equal(bad.status, 400);
    assert.equal(bad.body.error.code, 'invalid_input');
    assert.equal(bad.body.error.issues[0].path, 'dedup_key');
    const none = await s.get('/v1/nothing-here');
    assert.equal(none.status, 404);
    assert.deepEqual(Object.keys(none.body.error).sort(), ['code', 'message']);
  });

  test('health and readiness', async () => {
    assert.deepEqual((await s.get('/healthz')).body, { status: 'ok' });
    assert.deepEqual((await s.get('/readyz')).body, { status: 'ready', store: 'sqlite' });
  });
});
