// needs: redis postgres
/**
 * Network faults between the replicas and their store, on Redis and on
 * Postgres: a TCP fault proxy (test/helpers/fault-proxy.ts) in front of the
 * store, one per replica, adds latency, blackholes (no byte moves, no RST),
 * half-closes, resets and refuses, while two replicas serve a stream of
 * incidents delivered to a ServiceNow stand-in. Every attempt is recorded
 * and checked with the history checker; the ITSM must end with one standing
 * ticket per key.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { incidentKey } from '../../src/core/identity.js';
import { IDLE_IN_TRANSACTION_MS, openPool, transaction } from '../../src/store/postgres/pool.js';
import { startServicenowFake } from '../fakes/servicenow-fake.js';
import { startFaultProxy, type FaultProxy } from '../helpers/fault-proxy.js';
import { metric } from '../helpers/load.js';
import { PG_URL } from '../helpers/postgres.js';
import { startRedis } from '../helpers/redis.js';
import { tempDir } from '../helpers/tmp.js';
import { until } from '../helpers/wait.js';
import { assertNoHang, drive, healthySlowest, settledTickets, shuffle, startReplicas, toServicenow, type IngestShot, type Replicas } from './harness.js';
import { checkHistory, describe as describeViolation, History } from './history.js';
import { testSeed } from '../helpers/seed.js';

const SEED = testSeed('chaos/network-faults', 'CHAOS_SEED');

type Store = 'redis' | 'postgres';

const shotFor = (k: number, severity = 'MAJOR'): IngestShot => {
  const body = { element_id: `nf-${k}`, fault_class: 'LINK_DOWN', root_cause_id: 'uplink-7', severity };
  return { key: incidentKey(body), fp: `${severity}|0`, path: '/v1/incidents', body };
};

/** Copies of every key, shuffled: one in ten keys changes severity in its last copy. */
function shotsFor(from: number, keys: number, copies: number, seed: number): IngestShot[] {
  const out: IngestShot[] = [];
  for (let k = from; k < from + keys; k++) {
    for (let c = 0; c < copies; c++) out.push(shotFor(k, c === copies - 1 && k % 10 === 0 ? 'CRITICAL' : 'MAJOR'));
  }
  // Shuffle, then put each key's copies back in their order so the CRITICAL one is the key's last.
  const shuffled = shuffle(out, seed);
  const byKey = new Map<string, IngestShot[]>();
  for (const s of out) byKey.set(s.key, [...(byKey.get(s.key) ?? []), s]);
  return shuffled.map((s) => byKey.get(s.key)!.shift()!);
}

interface Rig {
  /** Postgres: the schema the replicas use */
  schema?: string;
  replicas: Replicas;
  proxies: FaultProxy[];
  snow: Awaited<ReturnType<typeof startServicenowFake>>;
  history: History;
  stop(): Promise<void>;
}

/** Runs `body` on a rig, stopping it however the body ends. */
async function withRig(store: Store, failOpenTimeoutMs: number, body: (r: Rig) => Promise<void>) {
  const r = await rig(store, failOpenTimeoutMs);
  try {
    await body(r);
  } finally {
    await r.stop();
  }
}

/** Failures in a row before a replica fails open (the default `failopen.fail_after`): the late call, then probes a timeout apart. */
const FAIL_AFTER = 3;

/** Every fault here starts once this share of a run's answers is in: those before it are the run's healthy baseline. */
const FAULT_AT = 0.2;

/** No answer waited past the documented fail-open bound (fail_after timeouts) plus the machine's margin: a fault must not make a request hang. */
const noHang = (u: { slowest: number; healthy: number }, timeoutMs: number) =>
  assertNoHang(u.slowest, FAIL_AFTER * timeoutMs, u.healthy, `${FAIL_AFTER} fail-open timeouts`);

/** Two replicas, each reaching the store through a proxy of its own, delivering to a ServiceNow stand-in. */
async function rig(store: Store, failOpenTimeoutMs: number): Promise<Rig> {
  const dir = tempDir('onceonly-netfault-');
  const snow = await startServicenowFake();
  let target: string;
  let urlVia: (address: string) => string;
  let cleanup: () => Promise<void>;
  let schema: string | undefined;
  if (store === 'redis') {
    const redis = await startRedis();
    target = `127.0.0.1:${redis.port}`;
    urlVia = (address) => `redis://${address}`;
    cleanup = () => redis.stop();
  } else {
    schema = `oo_netfault_${process.pid}_${Date.now() % 1e8}`;
    const base = new URL(PG_URL);
    target = `${base.hostname}:${base.port || 5432}`;
    urlVia = (address) => `postgres://${base.username}@${address}${base.pathname}?schema=${schema}`;
    cleanup = async () => {
      const admin = new pg.Client({ connectionString: PG_URL });
      await admin.connect();
      await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await admin.end();
    };
  }
  const proxies = [await startFaultProxy(target), await startFaultProxy(target)];
  // Replica i reaches the store through proxy i: a fault can cut one replica off and leave the other.
  const replicas = await startReplicasVia(
    proxies.map((p) => urlVia(p.address)),
    dir.path,
    toServicenow(snow.url),
    failOpenTimeoutMs,
  );
  return {
    ...(schema ? { schema } : {}),
    replicas,
    proxies,
    snow,
    history: new History(),
    async stop() {
      await replicas.stop();
      await Promise.all(proxies.map((p) => p.close()));
      await snow.close();
      await cleanup();
      dir.remove();
    },
  };
}

/** startReplicas with a store URL of each replica's own (its proxy). */
async function startReplicasVia(stores: string[], dir: string, extra: string, timeoutMs: number): Promise<Replicas> {
  const one = await Promise.all(stores.map((s, i) => startReplicas(1, s, `${dir}`, extra, timeoutMs, `r${i}`)));
  return {
    urls: one.map((r) => r.urls[0]!),
    procs: one.map((r) => r.procs[0]!),
    kills: [],
    crash: () => Promise.reject(new Error('not used here')),
    stop: async () => {
      await Promise.all(one.map((r) => r.stop()));
    },
  };
}

/** /readyz's status, 0 when the call itself failed (a kept-alive connection the server had just closed). */
const readyz = (url: string) =>
  fetch(`${url}/readyz`).then(
    (r) => r.status,
    () => 0,
  );

const readyAll = (replicas: Replicas) =>
  until(
    async () => (await Promise.all(replicas.urls.map(readyz))).every((s) => s === 200),
    60_000,
    () => 'replicas did not become ready again',
  );

/**
 * After the fault: both replicas ready again (their journals replayed), the
 * provisional decisions ended for the checker now (they reach the store only
 * when replayed), then one more copy of every key (a re-fire after healing).
 */
async function healed(r: Rig, keys: number, seed: number, refire = true) {
  await readyAll(r.replicas);
  const now = r.history.now();
  for (const o of r.history.ops) if (o.provisional) o.end = now;
  if (refire) await drive(shotsFor(0, keys, 1, seed), 16, r.replicas, r.history);
}

const sumMetric = async (replicas: Replicas, re: RegExp) => (await Promise.all(replicas.urls.map((u) => metric(u, re)))).reduce((a, b) => a + b, 0);

/** The history's legality, one ticket per key, and a final re-fire of every key being a SUPPRESS. */
async function verdict(r: Rig, keys: number, label: string) {
  const violations = checkHistory(r.history.ops);
  const { tickets, duplicates, merged } = await settledTickets(r.replicas, r.snow.records, keys);
  const failed = r.history.ops.filter((o) => !History.ok(o)).length;
  const provisional = r.history.ops.filter((o) => o.provisional).length;
  const [claimed, mergedReplays] = [
    await sumMetric(r.replicas, /^onceonly_failopen_reconciled_total\{outcome="claimed"\} (\d+)/),
    await sumMetric(r.replicas, /^onceonly_failopen_reconciled_total\{outcome="merged"\} (\d+)/),
  ];
  console.log(
    `${label} (seed ${SEED}): ${r.history.ops.length} attempts, ${failed} without answer, ${provisional} provisional; journal replay ${claimed} claimed, ${mergedReplays} merged; ` +
      `tickets ${tickets.length} of ${keys}, ${duplicates} duplicate, ${merged} merged by the adapter; history violations ${violations.length}; ` +
      `connection attempts ${r.proxies.map((p) => p.accepted).join(' / ')}`,
  );
  assert.deepEqual(
    violations.slice(0, 3).map((v) => describeViolation(v)),
    [],
    `illegal history (seed ${SEED})`,
  );
  assert.equal(tickets.length, keys, 'one standing ticket per key');
  assert.equal(duplicates, 0, 'no key has two standing tickets');
  return { provisional, claimed, mergedReplays };
}

/**
 * Runs `shots` with `clients` clients while `fault` runs beside them (from
 * `FAULT_AT` of the answers on); returns the fault's result, the slowest
 * answer and the healthy slowest (of the answers before the fault).
 */
async function under<T>(r: Rig, shots: IngestShot[], clients: number, fault: (progress: () => number) => Promise<T>) {
  let done = 0;
  const [, result] = await Promise.all([drive(shots, clients, r.replicas, r.history, (n) => (done = n)), fault(() => done / shots.length)]);
  const slowest = Math.max(...r.history.ops.map((o) => o.end - o.start));
  return { result, slowest, healthy: healthySlowest(r.history.ops, Math.floor(FAULT_AT * shots.length)) };
}

const whenProgress = (progress: () => number, at: number) =>
  until(
    () => progress() >= at,
    120_000,
    () => `progress ${progress()}`,
  );

for (const store of ['redis', 'postgres'] as const) {
  // The store's fail-open timeout as a deployment would set it, long enough that this loaded machine does not trip it by itself.
  const timeout = store === 'redis' ? 500 : 1000;

  test(`${store}: latency below the fail-open timeout changes no decision`, async () => {
    // The harness's long timeout: the point is the latency, not how far this loaded 2-core machine
    // can stall a replica by itself (which a short timeout would also count).
    const slowTimeout = 2000;
    await withRig(store, slowTimeout, async (r) => {
      const keys = 200;
      // A round trip of a tenth of the timeout: every call is slow (a Postgres decision waits on its
      // lock and its commit besides), and none is late, even queued behind others.
      const oneWay = slowTimeout / 20;
      for (const p of r.proxies) p.latency(oneWay);
      const { slowest } = await under(r, shotsFor(0, keys, 3, SEED), 16, async () => {});
      const provisional = r.history.ops.filter((o) => o.provisional).length;
      const creates = r.history.ops.filter((o) => o.decision === 'CREATE').length;
      console.log(
        `${store} latency ${oneWay} ms each way: ${r.history.ops.length} answers, slowest ${slowest.toFixed(0)} ms, ${provisional} provisional, ${creates} CREATEs`,
      );
      assert.equal(provisional, 0, 'nothing failed open');
      assert.equal(creates, keys, 'one CREATE per key');
      assert.equal(await sumMetric(r.replicas, /^onceonly_store_degradations_total (\d+)/), 0, 'no replica failed open');
      for (const p of r.proxies) p.latency(0);
      await verdict(r, keys, `${store} latency below the timeout`);
    });
  });

  test(`${store}: latency above the fail-open timeout fails open within three timeouts plus a bound, and recovers`, async () => {
    await withRig(store, timeout, async (r) => {
      const keys = 150;
      const u = await under(r, shotsFor(0, keys, 3, SEED + 1), 16, async (progress) => {
        await whenProgress(progress, FAULT_AT);
        for (const p of r.proxies) p.latency(timeout); // a round trip of twice the timeout
        await whenProgress(progress, 0.7);
        const degraded = await sumMetric(r.replicas, /^onceonly_store_degradations_total (\d+)/);
        for (const p of r.proxies) p.latency(0);
        return degraded;
      });
      const provisional = r.history.ops.filter((o) => o.provisional).length;
      console.log(
        `${store} latency ${timeout} ms each way: slowest answer ${u.slowest.toFixed(0)} ms (timeout ${timeout} ms, healthy slowest ${u.healthy.toFixed(0)} ms), ${provisional} provisional`,
      );
      assert.ok(u.result > 0, 'the replicas failed open while the store was slow');
      assert.ok(provisional > 0, 'some answers were provisional');
      noHang(u, timeout);
      await healed(r, keys, SEED + 2);
      await verdict(r, keys, `${store} latency above the timeout`);
    });
  });

  for (const heal of ['resume', 'drop'] as const) {
    test(`${store}: a blackhole is detected within three timeouts and, healed (${heal === 'resume' ? 'held bytes delivered late' : 'connections dead'}), the journal is replayed`, async () => {
      await withRig(store, timeout, async (r) => {
        const keys = 200;
        const u = await under(r, shotsFor(0, keys, 3, SEED + 3), 16, async (progress) => {
          await whenProgress(progress, FAULT_AT);
          for (const p of r.proxies) p.blackhole();
          const before = r.proxies.map((p) => p.accepted);
          await new Promise((res) => setTimeout(res, 4000));
          const notReady = (await Promise.all(r.replicas.urls.map(readyz))).filter((s) => s === 503).length;
          const attempts = r.proxies.map((p, i) => p.accepted - before[i]!);
          for (const p of r.proxies) p.heal({ dropConnections: heal === 'drop' });
          return { notReady, attempts };
        });
        console.log(
          `${store} blackhole 4 s, healed by ${heal}: slowest answer ${u.slowest.toFixed(0)} ms (healthy ${u.healthy.toFixed(0)} ms), readyz 503 on ${u.result.notReady} of 2, connection attempts during it ${u.result.attempts.join(' / ')}`,
        );
        assert.equal(u.result.notReady, 2, '/readyz said 503 on both replicas while the store was blackholed');
        noHang(u, timeout);
        await healed(r, keys, SEED + 4);
        const v = await verdict(r, keys, `${store} blackhole, ${heal}`);
        assert.ok(v.provisional > 0, 'decisions were made provisionally during the blackhole');
        assert.ok(v.claimed + v.mergedReplays > 0, 'the journal was replayed');
      });
    });
  }

  test(`${store}: one replica cut off from the store while the other serves: no duplicate ticket after healing`, async () => {
    // A longer timeout here: the point is that the replica still reaching the store keeps deciding there,
    // and on this loaded 2-core machine a stall of the whole machine can outlast the short one.
    await withRig(store, timeout * 4, async (r) => {
      const keys = 300;
      await under(r, shotsFor(0, keys, 4, SEED + 5), 16, async (progress) => {
        await whenProgress(progress, FAULT_AT);
        r.proxies[0]!.blackhole(); // replica 0 alone loses the store
        // It fails open only after failures in a row (the late call, then probes): wait for that, not only for progress.
        await until(
          () => r.history.ops.some((o) => o.provisional && o.replica === 0) || null,
          30_000,
          () => 'replica 0 failed open',
        );
        await whenProgress(progress, 0.7);
        r.proxies[0]!.heal({ dropConnections: true });
      });
      await healed(r, keys, SEED + 6);
      const provisionalBy = [0, 1].map((i) => r.history.ops.filter((o) => o.provisional && o.replica === i).length);
      console.log(`${store} partition: provisional answers by replica ${provisionalBy.join(' / ')}`);
      assert.ok(provisionalBy[0]! > 0, 'the cut-off replica failed open');
      assert.equal(provisionalBy[1], 0, 'the other replica kept deciding on the store');
      await verdict(r, keys, `${store} partition of one replica`);
    });
  });

  test(`${store}: resets, a half-close and a refusing port: reconnects are bounded and nothing hangs`, async () => {
    await withRig(store, timeout, async (r) => {
      const keys = 200;
      const u = await under(r, shotsFor(0, keys, 3, SEED + 7), 16, async (progress) => {
        await whenProgress(progress, FAULT_AT);
        for (const p of r.proxies) p.halfClose();
        await whenProgress(progress, 0.35);
        for (const p of r.proxies) p.reset();
        await whenProgress(progress, 0.5);
        // The port refuses for 5 s: count how often the replicas try it.
        const before = r.proxies.map((p) => p.accepted);
        for (const p of r.proxies) {
          p.refuse(true);
          p.reset();
        }
        await new Promise((res) => setTimeout(res, 5000));
        const attempts = r.proxies.map((p, i) => p.accepted - before[i]!);
        for (const p of r.proxies) p.refuse(false);
        return attempts;
      });
      console.log(
        `${store} refused for 5 s: ${u.result.join(' / ')} connection attempts by the two replicas; slowest answer ${u.slowest.toFixed(0)} ms (healthy ${u.healthy.toFixed(0)} ms)`,
      );
      noHang(u, timeout);
      // A reconnect storm would try hundreds of times a second. Both clients back off to one attempt a
      // second per connection after a failure (Redis's reconnect strategy; Postgres's pool opens
      // through one gate, one trial at a time): about 20 and 8 in 5 s.
      for (const n of u.result) assert.ok(n <= 30, `at most 30 connection attempts in 5 s per replica (saw ${u.result.join(', ')})`);
      await healed(r, keys, SEED + 8);
      await verdict(r, keys, `${store} resets, half-close, refusal`);
    });
  });
}

// A replica cut off in the middle of a transaction leaves its session "idle in
// transaction" on the server, holding what the transaction locked (the
// outbox and delivery rows a fan-out, lease or settle was working on, an
// Idempotency-Key's row): Postgres sends nothing while it waits for the
// client, so no retransmission ever fails and TCP keepalive takes hours to
// notice. Until the session ends, the other replicas skip those rows (SKIP
// LOCKED) or wait for them. The replicas' sessions end such a transaction
// after 10 s. A transaction is opened through the cut replica's proxy with
// the pool the replicas use, so the cut surely catches one, while the two
// replicas serve beside it.
test('postgres: a transaction cut off by the network does not hold its locks for long', async () => {
  const r = await rig('postgres', 1000);
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  // The cut replica's sessions, as the server sees them: by the ports its proxy connects from.
  const stuck = async () =>
    Number(
      (
        await admin.query<{ n: string }>(
          `SELECT count(*) AS n FROM pg_stat_activity WHERE state LIKE 'idle in transaction%' AND client_port = ANY($1::int[])`,
          [r.proxies[0]!.upstreamPorts()],
        )
      ).rows[0]!.n,
    );
  const pool = openPool(`postgres://${new URL(PG_URL).username}@${r.proxies[0]!.address}${new URL(PG_URL).pathname}`, r.schema!, 1);
  try {
    const keys = 400;
    let seen = 0;
    let cleared = Number.NaN;
    let abandoned: Promise<unknown> = Promise.resolve();
    await under(r, shotsFor(0, keys, 2, SEED + 9), 32, async (progress) => {
      await whenProgress(progress, 0.3);
      let inside!: () => void;
      const opened = new Promise<void>((res) => (inside = res));
      // BEGIN, a statement, then the cut before the next: the session is left idle in its transaction.
      abandoned = transaction(pool, null, async (c) => {
        await c.query('SELECT 1');
        inside();
        await c.query('SELECT 2');
      }).catch(() => {});
      await opened;
      const t0 = Date.now();
      r.proxies[0]!.blackhole(); // replica 0 and the transaction alike
      seen = await until(stuck, 5_000, () => 'no session of the cut proxy was idle in a transaction');
      await until(
        async () => (await stuck()) === 0,
        60_000,
        () => 'a session of the cut proxy still idle in a transaction',
      );
      cleared = Date.now() - t0;
      r.proxies[0]!.heal({ dropConnections: true });
    });
    await abandoned;
    console.log(`postgres: ${seen} session(s) of the cut-off proxy idle in a transaction, all ended by the server ${cleared} ms after the cut`);
    assert.ok(seen > 0);
    assert.ok(cleared < IDLE_IN_TRANSACTION_MS + 5_000, `the server ended the cut-off transactions within the idle timeout plus a bound (${cleared} ms)`);
    await healed(r, keys, 0, false);
    await verdict(r, keys, 'postgres cut mid-transaction');
  } finally {
    // On a failure the cut is still on: end it, or the abandoned transaction holds the pool open.
    for (const p of r.proxies) p.heal({ dropConnections: true });
    await pool.end().catch(() => {});
    await admin.end();
    await r.stop();
  }
});
