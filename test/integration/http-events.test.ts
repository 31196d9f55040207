import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { inProcessServer, type InProcessServer } from '../helpers/server.js';

const at = (s: number) => new Date(Date.UTC(2026, 0, 1) + s * 1000).toISOString();
const ev = (sequence: number, state: string, over: Record<string, unknown> = {}) => ({
  tenant_id: 'acme',
  device_id: 'pos-17',
  boot_id: 'b1',
  sequence,
  state,
  observed_at: at(Number.isSafeInteger(sequence) && sequence >= 0 ? sequence : 0),
  ...over,
});

describe('HTTP: device events', () => {
  let s: InProcessServer;
  before(async () => {
    s = await inProcessServer({ config: 'events: { retention_seconds: 3600, stale_after_seconds: 300 }' });
    s.clock.set(Date.UTC(2026, 0, 1) + 50_000);
  });
  after(() => s.stop());

  test('the drill over HTTP, the device view and the stats invariant', async () => {
    const answers = [];
    for (const e of [ev(40, 'ONLINE'), ev(41, 'BUSY'), ev(41, 'BUSY'), ev(43, 'BUSY'), ev(42, 'OFFLINE')]) {
      const r = await s.post('/v1/events', e);
      assert.equal(r.status, 200);
      answers.push(r.body);
    }
    assert.deepEqual(answers, [
      { outcome: 'applied', reason: null, gap: null, transition: null },
      { outcome: 'applied', reason: null, gap: null, transition: { from: 'ONLINE', to: 'BUSY' } },
      { outcome: 'duplicate', reason: null, gap: null, transition: null },
      { outcome: 'applied', reason: null, gap: { from: 42, to: 42 }, transition: null },
      { outcome: 'rejected', reason: 'stale_sequence', gap: null, transition: null },
    ]);
    const d = await s.get('/v1/devices/acme/pos-17');
    assert.deepEqual(d.body, {
      tenant_id: 'acme',
      device_id: 'pos-17',
      boot_id: 'b1',
      sequence: 43,
      state: 'BUSY',
      observed_at: at(43),
      age_seconds: 7,
      stale: false,
    });
    assert.equal((await s.get('/v1/devices/globex/pos-17')).status, 404);

    s.clock.advance(301_000);
    assert.equal((await s.get('/v1/devices/acme/pos-17')).body.stale, true);
    const metrics = (await s.app.inject({ url: '/metrics' })).payload;
    assert.match(metrics, /onceonly_devices_stale 1/);
    assert.match(metrics, /onceonly_event_sequence_gaps_total 1/);
    assert.match(metrics, /onceonly_event_transitions_total 1/);

    const stats = (await s.get('/v1/stats')).body;
    assert.deepEqual(stats, { received: 5, applied: 3, duplicate: 1, rejected: { stale_sequence: 1 }, sequence_gaps: 1 });
  });

  const bad: Array<[string, unknown, string]> = [
    ['missing tenant_id', { ...ev(1, 'X'), tenant_id: undefined }, 'tenant_id'],
    ['empty device_id', ev(1, 'X', { device_id: '' }), 'device_id'],
    ['device_id over 256', ev(1, 'X', { device_id: 'd'.repeat(257) }), 'device_id'],
    ['boot_id number', ev(1, 'X', { boot_id: 7 }), 'boot_id'],
    ['negative sequence', ev(-1, 'X'), 'sequence'],
    ['fractional sequence', ev(1.5, 'X'), 'sequence'],
    ['sequence beyond 2^53-1', ev(2 ** 53, 'X'), 'sequence'],
    ['sequence as a string', ev(1, 'X', { sequence: '1' }), 'sequence'],
    ['state over 64', ev(1, 'X'.repeat(65)), 'state'],
    ['observed_at not RFC 3339', ev(1, 'X', { observed_at: '30/11/2026' }), 'observed_at'],
    ['observed_at impossible date', ev(1, 'X', { observed_at: '2026-02-31T25:61:00Z' }), 'observed_at'],
    ['unknown field', ev(1, 'X', { priority: 'high' }), 'priority'],
  ];
  test('malformed events: 400 naming the field, counted as rejected/invalid, nothing applied', async () => {
    const before = (await s.get('/v1/stats')).body;
    for (const [name, body, field] of bad) {
      const r = await s.post('/v1/events', { ...(body as object), device_id: (body as { device_id?: unknown }).device_id ?? undefined });
      assert.equal(r.status, 400, name);
      assert.equal(r.body.error.code, 'invalid_input', name);
      assert.ok(
        r.body.error.issues.some((i: { path: string }) => i.path === field),
        `${name}: ${JSON.stringify(r.body.error.issues)}`,
      );
    }
    const tooBig = await s.app.inject({
      method: 'POST',
      url: '/v1/events',
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify(ev(1, 'x'.repeat(600_000))),
    });
    assert.equal(tooBig.statusCode, 413);
    const after = (await s.get('/v1/stats')).body;
    assert.equal(after.received - before.received, bad.length + 1);
    assert.equal((after.rejected.invalid ?? 0) - (before.rejected.invalid ?? 0), bad.length);
    assert.equal(after.rejected.payload_too_large, 1);
    assert.equal(after.applied, before.applied);
    assert.equal(after.duplicate, before.duplicate, 'every request the client sent is counted as it was answered: refused, none applied or duplicate');
    for (const [, body] of bad) {
      const dev = (body as { device_id?: unknown }).device_id;
      if (typeof dev === 'string' && dev.length > 0 && dev.length <= 256) {
        assert.equal((await s.get(`/v1/devices/acme/${encodeURIComponent(dev)}`)).status, dev === 'pos-17' ? 200 : 404);
      }
    }
  });
});
