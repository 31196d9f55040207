// needs: promtool
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { inProcessServer } from '../helpers/server.js';
import { startSink } from '../fakes/http-fake.js';
import { until } from '../helpers/wait.js';

// Debian's promtool (package prometheus; npm test's pretest installs it when missing).
const promtool = (args: string[], input?: string) =>
  spawnSync('promtool', args, { input, encoding: 'utf8', cwd: fileURLToPath(new URL('../../docs/prometheus/', import.meta.url)) });

test('/metrics passes `promtool check metrics` with every family populated', async () => {
  const hook = await startSink(200, {});
  hook.faults = (r) => (r.body?.kind === 'violation' ? { status: 400 } : 'ok');
  const s = await inProcessServer({
    store: 'memory',
    config: `delivery: { max_retries: 0 }\nadapters: [ { name: hook, type: webhook, url: "${hook.url}" } ]\n`,
  });
  try {
    await s.post('/v1/incidents', { element_id: 'a', fault_class: 'b', root_cause_id: 'c', severity: 'MAJOR' });
    await s.post('/v1/incidents', { element_id: 'a', fault_class: 'b', root_cause_id: 'c', severity: 'MAJOR' });
    await s.post('/v1/incidents', { nope: 1 });
    await s.post('/v1/events', { tenant_id: 't', device_id: 'd', boot_id: 'b', sequence: 1, state: 'IDLE', observed_at: '2026-11-30T12:00:00Z' });
    await s.post('/v1/violations', { process_id: 'p', rule_id: 'nelson_1', timestamp: 1770000000, value: 13, center: 10, ucl: 12, lcl: 8 });
    await until(async () => (await s.get('/v1/dead-letters')).body.dead_letters.length === 1 && hook.requests.length === 2, 10_000);
    const text = await (await fetch(`${s.url}/metrics`)).text();
    for (const family of [
      'onceonly_incident_decisions_total',
      'onceonly_deliveries_total',
      'onceonly_dead_letters',
      'onceonly_outbox_lag_seconds',
      'onceonly_events_total',
      'onceonly_violation_decisions_total',
      'onceonly_store_operation_duration_seconds',
      'onceonly_build_info',
      'onceonly_config_reload_total',
      'onceonly_config_last_reload_success_timestamp_seconds',
    ]) {
      assert.match(text, new RegExp(`^# HELP ${family} `, 'm'), family);
    }
    const r = promtool(['check', 'metrics'], text);
    assert.equal(r.status, 0, `promtool: ${r.stdout}${r.stderr}`);
    assert.equal((r.stdout + r.stderr).trim(), '', 'no lint complaints');
  } finally {
    await s.stop();
    await hook.close();
  }
});

test('on SQLite, /metrics adds the WAL and its checkpoint worker, and still passes `promtool check metrics`', async () => {
  const s = await inProcessServer({ store: 'sqlite' });
  try {
    await s.post('/v1/incidents', { element_id: 'a', fault_class: 'b', root_cause_id: 'c', severity: 'MAJOR' });
    const text = await (await fetch(`${s.url}/metrics`)).text();
    assert.match(text, /^onceonly_sqlite_checkpoint_worker_up 1$/m);
    assert.match(text, /^onceonly_sqlite_wal_writer_restarts_total 0$/m);
    const wal = Number(/^onceonly_sqlite_wal_bytes (\d+)$/m.exec(text)?.[1]);
    assert.ok(wal > 0, `the WAL holds the decision's pages (${wal} bytes)`);
    const r = promtool(['check', 'metrics'], text);
    assert.equal((r.stdout + r.stderr).trim(), '', `promtool: ${r.stdout}${r.stderr}`);
    assert.equal(r.status, 0);
  } finally {
    await s.stop();
  }
  const m = await inProcessServer({ store: 'memory' });
  try {
    assert.doesNotMatch(await (await fetch(`${m.url}/metrics`)).text(), /onceonly_sqlite_/, 'no SQLite series on a store without one');
  } finally {
    await m.stop();
  }
});

test('the alerting rules in docs/prometheus pass `promtool check rules` and their unit tests', () => {
  const check = promtool(['check', 'rules', 'onceonly-alerts.yml']);
  assert.equal(check.status, 0, check.stdout + check.stderr);
  assert.match(check.stdout, /SUCCESS: 12 rules found/);
  const unit = promtool(['test', 'rules', 'onceonly-alerts.test.yml']);
  assert.equal(unit.status, 0, unit.stdout + unit.stderr);
  assert.match(unit.stdout, /SUCCESS/);
});
