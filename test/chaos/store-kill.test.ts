// needs: redis
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { incidentKey } from '../../src/core/identity.js';
import { startServicenowFake } from '../fakes/servicenow-fake.js';
import { metric } from '../helpers/load.js';
import { startRedis } from '../helpers/redis.js';
import { tempDir } from '../helpers/tmp.js';
import { until } from '../helpers/wait.js';
import { assertNoHang, drive, healthySlowest, settledTickets, shuffle, startReplicas, toServicenow, type IngestShot } from './harness.js';
import { checkHistory, describe as describeViolation, History } from './history.js';
import { testSeed } from '../helpers/seed.js';

const KEYS = 3000;
const TIMEOUT_MS = 250;
/** The store is killed once this share of the answers is in: those before it are the run's healthy baseline. */
const KILL_AT = 0.3;
const SEED = testSeed('chaos/store-kill', 'CHAOS_SEED');

const shotFor = (k: number): IngestShot => {
  const body = { element_id: `pe-${k}`, fault_class: 'BGP_DOWN', root_cause_id: 'core-2', severity: 'MAJOR' };
  return { key: incidentKey(body), fp: 'MAJOR|0', path: '/v1/incidents', body };
};

// redis-server is SIGKILLed under load with two replicas
// serving and comes back empty 5 s later. Nothing may fail or hang past the
// fail-open timeout; once the journals are replayed, every key is live once
// and has one ticket, the provisional duplicates merged and counted.
test(`store kill: redis-server SIGKILLed under load, back empty after 5 s; ${KEYS} keys, one ticket each (seed ${SEED})`, async () => {
  const redis = await startRedis();
  const snow = await startServicenowFake();
  const dir = tempDir();
  const replicas = await startReplicas(2, redis.url, dir.path, toServicenow(snow.url), TIMEOUT_MS);
  const history = new History();
  try {
    // Three copies of every key while the store dies and returns, then one more of each once it is back.
    const during = shuffle(
      Array.from({ length: KEYS * 3 }, (_, n) => shotFor(n % KEYS)),
      SEED,
    );
    let killed: Promise<void> | null = null;
    let killedAt = Infinity;
    await drive(during, 32, replicas, history, (done) => {
      if (killed || done < KILL_AT * during.length) return;
      killed = (async () => {
        await redis.kill('SIGKILL');
        killedAt = history.now();
        await new Promise((r) => setTimeout(r, 5000));
        await redis.restart();
      })();
    });
    await killed;
    assert.ok(Number.isFinite(killedAt), 'the store was killed and restarted');
    const degraded = history.ops.filter((o) => o.provisional).length;
    const latencyOfProvisional = history.ops.filter((o) => o.provisional).map((o) => o.end - o.start);
    // The journals are replayed: both replicas ready again.
    await until(
      async () => (await Promise.all(replicas.urls.map(async (u) => (await fetch(`${u}/readyz`)).status))).every((s) => s === 200),
      30_000,
      () => 'replicas not ready',
    );
    // A provisional decision reaches the shared store only when its journal is replayed, at some time up
    // to now (before the kill, if the replica failed open on a slow store and recovered; or after the
    // restart): for the checker it is in flight until then.
    const replayedBy = history.now();
    for (const o of history.ops) if (o.provisional) o.end = replayedBy;
    await drive(
      Array.from({ length: KEYS }, (_, k) => shotFor(k)),
      32,
      replicas,
      history,
    );

    const slowest = Math.max(...history.ops.filter((o) => !o.provisional).map((o) => o.end - o.start), ...latencyOfProvisional);
    const healthy = healthySlowest(history.ops, Math.floor(KILL_AT * during.length));
    const failed = history.ops.filter((o) => !History.ok(o)).length;
    // Redis died with everything it knew and came back empty: for the checker, every key's life starts
    // again at the kill (the journals' provisional decisions and the replays belong to the new episode).
    for (const key of new Set(history.ops.map((o) => o.key))) {
      history.record({ kind: 'close', key, replica: -1, start: killedAt, end: killedAt, status: 204 });
    }
    const violations = checkHistory(history.ops);

    // Replicas failing open each deliver their own provisional CREATE; a second ticket made that way is
    // cancelled as a duplicate of the first by the adapter (merged), and only tickets that stand count.
    const { tickets, duplicates, merged: mergedTickets } = await settledTickets(replicas, snow.records, KEYS);
    const reconciled = async (outcome: string) =>
      (await Promise.all(replicas.urls.map((u) => metric(u, new RegExp(`^onceonly_failopen_reconciled_total\\{outcome="${outcome}"\\} (\\d+)`))))).reduce(
        (a, b) => a + b,
        0,
      );
    const [claimed, merged] = [await reconciled('claimed'), await reconciled('merged')];
    console.log(
      `store kill (seed ${SEED}): ${history.ops.length - KEYS} requests, ${failed} failed, slowest ${slowest.toFixed(0)} ms (fail-open timeout ${TIMEOUT_MS} ms, healthy slowest ${healthy.toFixed(0)} ms), ` +
        `${degraded} provisional answers, journal replay: ${claimed} claimed, ${merged} merged; tickets ${tickets.length}, duplicate tickets ${duplicates} ` +
        `(${mergedTickets} made by replicas failing open at once, cancelled as duplicates), history violations ${violations.length}`,
    );
    assert.equal(failed, 0, 'no request failed');
    assertNoHang(slowest, TIMEOUT_MS, healthy, 'the fail-open timeout');
    assert.ok(degraded > 0, 'the outage really happened under load');
    assert.deepEqual(
      violations.slice(0, 5).map((v) => describeViolation(v)),
      [],
      `illegal history (seed ${SEED})`,
    );
    assert.equal(tickets.length, KEYS, 'one ticket per key');
    assert.ok(
      tickets.every((t) => t.state !== '8'),
      'no standing ticket is cancelled',
    );
    assert.equal(duplicates, 0);
    // One live record per key, and a further re-fire of any of them is a SUPPRESS.
    const again = history.ops.length;
    await drive(
      Array.from({ length: KEYS }, (_, k) => shotFor(k)),
      32,
      replicas,
      history,
    );
    const last = history.ops.slice(again);
    assert.deepEqual([...new Set(last.map((o) => `${o.decision}${o.provisional ? ' provisional' : ''}`))], ['SUPPRESS']);
  } finally {
    await replicas.stop();
    await snow.close();
    await redis.stop();
    dir.remove();
  }
});
