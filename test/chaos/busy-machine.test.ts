// needs: redis postgres
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import pg from 'pg';
import { startSink } from '../fakes/http-fake.js';
import { fire, type Shot } from '../helpers/load.js';
import { PG_URL } from '../helpers/postgres.js';
import type { ServerProcess } from '../helpers/process.js';
import { defaultReplicas } from '../helpers/default-replicas.js';
import { startRedis } from '../helpers/redis.js';
import { caughtUp } from '../helpers/settle.js';
import { tempDir } from '../helpers/tmp.js';
import { until } from '../helpers/wait.js';

/**
 * Fail open only when the store is gone, not when the machine is busy. Two
 * replicas with the DEFAULT fail-open settings share a healthy store while
 * three processes spin on this 2-core machine (more runnable processes than
 * cores, as on a busy production box): the replicas' event loops are starved
 * and their timers fire late, yet the store answers every call. 200 faults,
 * each sent 40 times in parallel across both replicas, must make exactly
 * 200 CREATEs, none provisional, and 200 creates at the receiver.
 */
const FAULTS = 200;
const COPIES = 40;

const spinners = (n: number): ChildProcess[] => Array.from({ length: n }, () => spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' }));

async function underLoad(store: string, label: string) {
  const hook = await startSink(200, {});
  const dir = tempDir();
  const replicas: ServerProcess[] = [];
  const busy = spinners(3);
  try {
    // The fail-open timeout and its hysteresis are the defaults.
    await defaultReplicas(store, hook.url, dir.path, replicas);
    const [a, b] = replicas as [ServerProcess, ServerProcess];
    const shots: Shot[] = [];
    for (let k = 0; k < FAULTS; k++) {
      const body = { element_id: `busy-${label}-${k}`, fault_class: 'LOS', root_cause_id: 'cut', severity: 'MAJOR' };
      for (let c = 0; c < COPIES; c++) shots.push({ url: `${c % 2 ? a.url : b.url}/v1/incidents`, body });
    }
    // Each fault's 40 copies are adjacent, so they are in flight together.
    const answers = await fire(shots, 80);
    const bad = answers.filter((x) => x.status !== 200);
    assert.equal(bad.length, 0, `every copy answered 200: ${JSON.stringify(bad[0])}`);
    const provisional = answers.filter((x) => x.body.provisional === true);
    // On failure, say why each replica failed open: its own log line names the cause.
    const why = () =>
      replicas
        .flatMap((r) => [...r.lines, ...r.stderr().split('\n')].filter((l) => l.includes('failing open')))
        .slice(0, 4)
        .join('\n');
    assert.equal(
      provisional.length,
      0,
      `no provisional answer from a healthy store (${provisional.length}: ${JSON.stringify(provisional[0]?.body)})\n${why()}`,
    );
    const creates = answers.filter((x) => x.body.decision === 'CREATE');
    assert.equal(creates.length, FAULTS, 'exactly one CREATE per fault');
    const createsAt = () => hook.requests.filter((r) => r.body.action === 'create');
    await until(
      () => createsAt().length >= FAULTS || null,
      120_000,
      () => `${createsAt().length} creates delivered`,
    );
    await caughtUp(replicas);
    assert.equal(createsAt().length, FAULTS, 'one create per fault at the receiver');
    assert.equal(new Set(createsAt().map((r) => r.headers['idempotency-key'])).size, FAULTS);
  } finally {
    for (const p of busy) p.kill('SIGKILL');
    await Promise.all(replicas.map((r) => r.stop('SIGKILL')));
    await hook.close();
    dir.remove();
  }
}

test('a busy machine does not fail a healthy Redis open: 200 faults × 40 copies, 200 CREATEs, none provisional', async () => {
  const redis = await startRedis();
  try {
    await underLoad(redis.url, 'redis');
  } finally {
    await redis.stop();
  }
});

test('a busy machine does not fail a healthy Postgres open: 200 faults × 40 copies, 200 CREATEs, none provisional', async () => {
  const schema = `oo_busy_${process.pid}`;
  const admin = new pg.Pool({ connectionString: PG_URL, max: 1 });
  try {
    await underLoad(`${PG_URL}?schema=${schema}`, 'pg');
  } finally {
    await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await admin.end();
  }
});
