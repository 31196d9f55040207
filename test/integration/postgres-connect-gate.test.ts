// needs: postgres
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ConnectGate } from '../../src/store/postgres/connect-gate.js';
import { openPool } from '../../src/store/postgres/pool.js';
import { isTransportFault } from '../../src/store/errors.js';
import { startFaultProxy } from '../helpers/fault-proxy.js';
import { PG_URL } from '../helpers/postgres.js';
import { until } from '../helpers/wait.js';

test('the gate lets everyone connect while healthy, and after a failure one trial at a time, no sooner than its backoff', () => {
  let now = 1000;
  const gate = new ConnectGate(() => now, 100, 1000);
  const a = gate.admit();
  const b = gate.admit();
  assert.ok(a.ok && b.ok, 'healthy: connections are not paced');
  a.done(new Error('ECONNREFUSED'));
  // The failure closes the gate for 100 ms; a connection already under way still reports.
  assert.deepEqual(gate.admit(), { ok: false, waitMs: 100 });
  b.done(new Error('ECONNREFUSED'));
  now += 199;
  assert.deepEqual(gate.admit(), { ok: false, waitMs: 1 }, 'the second failure in a row doubles the backoff');
  now += 1;
  const trial = gate.admit();
  assert.ok(trial.ok, 'the backoff over, one trial goes');
  assert.equal(gate.admit().ok, false, 'and only one while it is under way');
  trial.done(new Error('ECONNREFUSED'));
  // The backoff doubles per failure, to at most 1 s.
  for (const step of [400, 800, 1000, 1000]) {
    assert.deepEqual(gate.admit(), { ok: false, waitMs: step });
    now += step;
    const t = gate.admit();
    assert.ok(t.ok);
    t.done(new Error('ECONNREFUSED'));
  }
  now += 1000;
  const last = gate.admit();
  assert.ok(last.ok);
  last.done(null);
  const after = [gate.admit(), gate.admit(), gate.admit()];
  assert.ok(
    after.every((x) => x.ok),
    'one success opens the gate for everyone',
  );
});

// Planted fault it catches: the pool opened without the gate (every query tried the port itself).
test('a pool behind a refusing port tries a few times a second, fails fast as unreachable, and reconnects once the port opens', async () => {
  const target = new URL(PG_URL);
  const proxy = await startFaultProxy(`${target.hostname}:${target.port || 5432}`);
  const url = new URL(PG_URL);
  url.port = String(proxy.port);
  const pool = openPool(url.toString(), 'public', 10);
  try {
    await pool.query('SELECT 1');
    proxy.refuse(true);
    proxy.reset();
    const before = proxy.accepted;
    // 2 s of 20 queries every 20 ms: 2,000 queries that each want a connection.
    const errors: unknown[] = [];
    const started = performance.now();
    while (performance.now() - started < 2000) {
      const round = await Promise.allSettled(Array.from({ length: 20 }, () => pool.query('SELECT 1')));
      for (const r of round) if (r.status === 'rejected') errors.push(r.reason);
      await new Promise((r) => setTimeout(r, 20));
    }
    const attempts = proxy.accepted - before;
    console.log(`a refusing port for 2 s under 2,000 queries: ${attempts} connection attempts, ${errors.length} queries failed`);
    assert.ok(errors.length >= 1000, 'the queries failed while the port refused');
    for (const err of errors) assert.ok(isTransportFault(err), `every failure reads as "unreachable" (${String(err)})`);
    // Unpaced, every query is an attempt (thousands). Paced: the first burst of at most the pool's
    // ten connections, then one trial per backoff (100, 200, 400, 800 ms, then each second).
    assert.ok(attempts >= 2, `the pool kept trying (saw ${attempts})`);
    assert.ok(attempts <= 10 + 8, `a paced pool, not a storm (saw ${attempts} attempts)`);
    proxy.refuse(false);
    await until(
      () =>
        pool.query('SELECT 1').then(
          (r) => r.rowCount === 1,
          () => false,
        ),
      10_000,
      () => 'the pool reconnected after the port opened',
    );
  } finally {
    await pool.end();
    await proxy.close();
  }
});

// Planted fault it catches: a timed-out attempt shutting the gate (a busy machine failing every query at once).
test('an attempt that ran out of time does not shut the gate: it paced itself, and a busy machine is what makes it', () => {
  let now = 0;
  const gate = new ConnectGate(() => now, 100, 1000, 5000);
  const slow = gate.admit();
  now += 5000;
  const quick = gate.admit();
  assert.ok(slow.ok && quick.ok);
  slow.done(new Error('Connection terminated due to connection timeout'));
  assert.ok(gate.admit().ok, 'a timed-out attempt leaves the gate open');
  quick.done(new Error('connect ECONNREFUSED'));
  assert.deepEqual(gate.admit(), { ok: false, waitMs: 100 }, 'a refusal shuts it as before');
});
