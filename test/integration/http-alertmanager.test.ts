import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { inProcessServer, type InProcessServer } from '../helpers/server.js';
import { alertSeverity } from '../../src/inputs/alertmanager/severity.js';

const alert = (over: Record<string, unknown> = {}) => ({
  status: 'firing',
  labels: { alertname: 'DiskFull', instance: 'db1', severity: 'warning' },
  annotations: { summary: 'disk' },
  startsAt: '2026-11-30T12:00:00Z',
  endsAt: '0001-01-01T00:00:00Z',
  generatorURL: 'http://p/graph',
  fingerprint: 'a1b2c3d4e5f60718',
  ...over,
});
const payload = (alerts: unknown[], over: Record<string, unknown> = {}) => ({
  version: '4',
  groupKey: '{}:{alertname="DiskFull"}',
  truncatedAlerts: 0,
  status: 'firing',
  receiver: 'onceonly',
  groupLabels: {},
  commonLabels: {},
  commonAnnotations: {},
  externalURL: 'http://am:9093',
  alerts,
  ...over,
});

describe('HTTP: Alertmanager webhook', () => {
  let s: InProcessServer;
  before(async () => {
    // The clock where the alerts below happen: a resolved alert's end is believed up to a minute past now.
    s = await inProcessServer({ store: 'memory', clockStart: Date.parse('2026-11-30T12:10:30Z') });
  });
  after(() => s.stop());

  test('a resolved alert whose endsAt is far in the future does not hide the next firings as stale', async () => {
    const fp = 'f00dfeedf00dfeed';
    assert.equal((await s.post('/v1/alertmanager', payload([alert({ fingerprint: fp })]))).body.alerts[0].outcome, 'CREATE');
    const resolved = await s.post('/v1/alertmanager', payload([alert({ fingerprint: fp, status: 'resolved', endsAt: '2099-01-01T00:00:00Z' })]));
    assert.equal(resolved.body.alerts[0].outcome, 'closed');
    // A new episode two minutes later: a real fault, not a late copy of the closed one.
    s.clock.advance(120_000);
    const again = await s.post('/v1/alertmanager', payload([alert({ fingerprint: fp, startsAt: new Date(s.clock.now()).toISOString() })]));
    assert.equal(again.body.alerts[0].outcome, 'CREATE');
  });

  test('identity is the fingerprint: peers differing in externalURL, groupKey and startsAt are one alert; an episode opens, updates, closes', async () => {
    const first = await s.post('/v1/alertmanager', payload([alert()]));
    assert.deepEqual(first.body, { status: 'success', alerts: [{ fingerprint: 'a1b2c3d4e5f60718', status: 'firing', outcome: 'CREATE', muted: null }] });
    const peer = await s.post(
      '/v1/alertmanager',
      payload([alert({ startsAt: '2026-11-30T12:00:01Z' })], { externalURL: 'http://am-2:9093', groupKey: 'other', newField: true }),
    );
    assert.equal(peer.body.alerts[0].outcome, 'SUPPRESS', 'a peer copy (and an unknown field) is fine');
    assert.equal(
      (await s.post('/v1/alertmanager', payload([alert({ labels: { alertname: 'DiskFull', severity: 'critical' } })]))).body.alerts[0].outcome,
      'UPDATE',
    );
    const resolved = await s.post('/v1/alertmanager', payload([alert({ status: 'resolved', endsAt: '2026-11-30T12:10:00Z' })], { status: 'resolved' }));
    assert.equal(resolved.body.alerts[0].outcome, 'closed');
    assert.equal((await s.post('/v1/alertmanager', payload([alert()]))).body.alerts[0].outcome, 'stale', 'a late firing of the closed episode');
    assert.equal(
      (await s.post('/v1/alertmanager', payload([alert({ status: 'resolved', endsAt: '2026-11-30T12:10:05Z' })]))).body.alerts[0].outcome,
      'ignored',
    );
    assert.equal((await s.post('/v1/alertmanager', payload([alert({ startsAt: '2026-11-30T13:00:00Z' })]))).body.alerts[0].outcome, 'CREATE', 'a new episode');
  });

  test('several alerts in one call are decided one by one', async () => {
    const r = await s.post('/v1/alertmanager', payload([alert({ fingerprint: 'f1' }), alert({ fingerprint: 'f2' }), alert({ fingerprint: 'f1' })]));
    assert.deepEqual(
      r.body.alerts.map((a: { outcome: string }) => a.outcome),
      ['CREATE', 'CREATE', 'SUPPRESS'],
    );
  });

  test('bad payloads: 400 naming the field, nothing decided', async () => {
    const cases: Array<[unknown, string]> = [
      [payload([alert()], { version: '3' }), 'version'],
      [payload([alert({ fingerprint: '' })]), 'alerts.0.fingerprint'],
      [payload([alert({ startsAt: 'yesterday' })]), 'alerts.0.startsAt'],
      [payload([alert({ status: 'pending' })]), 'alerts.0.status'],
      [payload([alert({ labels: { a: 1 } })]), 'alerts.0.labels.a'],
      [payload('x' as unknown as unknown[]), 'alerts'],
    ];
    for (const [body, path] of cases) {
      const r = await s.post('/v1/alertmanager', body);
      assert.equal(r.status, 400, path);
      assert.ok(
        r.body.error.issues.some((i: { path: string }) => i.path === path),
        `${path}: ${JSON.stringify(r.body.error.issues)}`,
      );
    }
    assert.equal(
      (await s.post('/v1/alertmanager', payload([alert({ fingerprint: 'never-seen' })]))).body.alerts[0].outcome,
      'CREATE',
      'none of them stored anything',
    );
  });

  test('severity label mapping', () => {
    assert.deepEqual(['critical', 'page', 'warning', 'info', 'none', 'error', undefined, 'WARNING'].map(alertSeverity), [
      'CRITICAL',
      'CRITICAL',
      'MINOR',
      'INFO',
      'INFO',
      'MAJOR',
      'MAJOR',
      'MINOR',
    ]);
  });
});
