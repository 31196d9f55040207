// needs: postgres
import { test } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { systemClock } from '../../src/core/clock.js';
import { ConnectGate } from '../../src/store/postgres/connect-gate.js';
import { PgStore } from '../../src/store/postgres/pg-store.js';
import { openPool } from '../../src/store/postgres/pool.js';
import { ProbeConnection } from '../../src/store/postgres/probe-connection.js';
import { startFaultProxy } from '../helpers/fault-proxy.js';
import { PG_URL } from '../helpers/postgres.js';

/** Settles `p` or says it hangs: a guard against waiting for ever, not a measure of speed. */
const settledWithin = <T>(p: Promise<T>, ms: number) =>
  Promise.race([
    p.then(
      () => 'answered' as const,
      () => 'failed' as const,
    ),
    new Promise<'hangs'>((r) => setTimeout(() => r('hangs'), ms).unref()),
  ]);

// Planted fault it catches: probes sent through the main pool, behind its queue.
test('a probe is answered while every pooled connection waits on a lock and more queries queue behind them', async () => {
  const gate = new ConnectGate();
  const store = new PgStore(openPool(PG_URL, 'public', 2, { gate }), systemClock, { probe: new ProbeConnection(PG_URL, 'public', gate) });
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  const key = 0x0dd0 + process.pid;
  try {
    await admin.query('SELECT pg_advisory_lock($1)', [key]);
    // Two pooled connections block on the lock; two more queries wait for one of them.
    const pool = (store as unknown as { pool: pg.Pool }).pool;
    const blocked = Array.from({ length: 4 }, () => pool.query('SELECT pg_advisory_lock($1), pg_advisory_unlock($1)', [key]));
    let finished = 0;
    for (const b of blocked)
      b.then(
        () => finished++,
        () => finished++,
      );
    const queued = store.ping();
    assert.equal(await settledWithin(store.probeHealth(), 10_000), 'answered', 'the probe answered beside the queue');
    assert.equal(finished, 0, 'while the pooled queries still waited on the lock');
    assert.equal(await settledWithin(queued, 200), 'hangs', 'and a ping through the pool still waited behind them');
    await admin.query('SELECT pg_advisory_unlock($1)', [key]);
    await Promise.all([...blocked, queued]);
  } finally {
    await admin.end();
    await store.close();
  }
});

// Planted fault it catches: a probe left waiting behind an earlier one whose connection hangs.
test('overlapping probes share the connection; one unanswered past its bound is closed, and the next opens a fresh connection', async () => {
  const target = new URL(PG_URL);
  const proxy = await startFaultProxy(`${target.hostname}:${target.port || 5432}`);
  const url = new URL(PG_URL);
  url.port = String(proxy.port);
  const stuckMs = 300;
  const probe = new ProbeConnection(url.toString(), 'public', new ConnectGate(), stuckMs);
  try {
    // Two probes while the connection is still being opened: each gets its own answer on it.
    await Promise.all([probe.check(), probe.check()]);
    assert.equal(proxy.accepted, 1, 'one connection for both');
    await probe.check();
    assert.equal(proxy.accepted, 1, 'a healthy probe keeps its connection');
    // The path of the open connection dies without a FIN or RST; new connections get through.
    proxy.freezeOpen();
    const stuck = probe.check();
    const queued = probe.check();
    // Read below, once they have ended; handled from now on.
    for (const p of [stuck, queued]) p.catch(() => {});
    assert.equal(await settledWithin(stuck, stuckMs + 100), 'hangs', 'the check waits on the dead path');
    assert.equal(proxy.accepted, 1, 'within the bound, a probe waits on the same connection');
    assert.equal(await settledWithin(probe.check(), 10_000), 'answered', 'past the bound, the next probe answered on a fresh connection');
    assert.equal(proxy.accepted, 2);
    assert.deepEqual(
      [await settledWithin(stuck, 10_000), await settledWithin(queued, 10_000)],
      ['failed', 'failed'],
      'the checks on the dead connection were ended, not left to wait',
    );
    await probe.check();
    assert.equal(proxy.accepted, 2, 'the fresh connection is kept');
  } finally {
    await probe.close();
    await proxy.close();
  }
});
