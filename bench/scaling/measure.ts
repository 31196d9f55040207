/**
 * The capacity model's inputs, measured: what one decision costs the store
 * server and the replica, per operation and for the whole mix with delivery.
 * Server costs are CPU seconds the server process spent (Redis's own
 * `INFO cpu` and `INFO commandstats`, Postgres's backends from /proc and
 * `pg_stat_user_functions`), not wall time, so they hold on a busy machine.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { systemClock } from '../../src/core/clock.js';
import { redisConnection } from '../../src/store/redis/connection.js';
import { RedisStore } from '../../src/store/redis/redis-store.js';
import { hashSlot } from '../../test/helpers/slots.js';
import { PgStore } from '../../src/store/postgres/pg-store.js';
import type { DedupStore } from '../../src/store/contract/index.js';
import { startRedis, type RedisServer } from '../../test/helpers/redis.js';
import { freshSchema, PG_URL } from '../../test/helpers/postgres.js';
import { tempDir } from '../../test/helpers/tmp.js';
import { startListening, wrkAsync } from '../http/wrk.js';
import { drained, startCountingSink } from '../http/sink.js';
import { OUTBOX, TENANT } from '../backends/backend.js';
import { PGBENCH, pgbench } from '../backends/postgres.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const MIX = fileURLToPath(new URL('../http/mix.lua', import.meta.url));
const CLK_TCK = 100;

/** `INFO commandstats` as command → calls and µs. */
export function commandStats(redis: RedisServer): Map<string, { calls: number; usec: number }> {
  const out = new Map<string, { calls: number; usec: number }>();
  for (const m of redis.cli('INFO', 'commandstats').matchAll(/^cmdstat_([^:]+):calls=(\d+),usec=(\d+)/gm)) {
    out.set(m[1]!, { calls: Number(m[2]), usec: Number(m[3]) });
  }
  return out;
}

/** Redis's own CPU seconds (user + system) so far. */
export function redisCpu(redis: RedisServer): number {
  const info = redis.cli('INFO', 'cpu');
  return Number(/used_cpu_user:([\d.]+)/.exec(info)?.[1]) + Number(/used_cpu_sys:([\d.]+)/.exec(info)?.[1]);
}

/** A process's CPU seconds (user + system) so far, from /proc. */
export function processCpu(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) / CLK_TCK;
  } catch {
    return 0; // gone meanwhile
  }
}

/** Every Postgres server process's CPU seconds (postmaster, backends, WAL writer, checkpointer). */
function postgresCpu(): number {
  let sum = 0;
  for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      if (readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === 'postgres') sum += processCpu(Number(pid));
    } catch {}
  }
  return sum;
}

/** Runs `op(i)` for i < n, `inflight` at a time. */
async function drive(n: number, inflight: number, op: (i: number) => Promise<unknown>) {
  let next = 0;
  await Promise.all(
    Array.from({ length: inflight }, async () => {
      while (next < n) await op(next++);
    }),
  );
}

export interface ScriptCost {
  what: string;
  /** Redis CPU per operation, µs (the script calls' own time, INFO commandstats) */
  usPerOp: number;
  /** script calls per operation (claims made at once share one call) */
  callsPerOp: number;
}

const claim = (i: number, prefix: string, fp = 'MAJOR|0') => ({
  tenant: TENANT,
  key: `dedup:${prefix}-${i}`,
  fingerprint: fp,
  ttlMs: 3_600_000,
  outbox: OUTBOX,
});

/** Each operation alone against a fresh Redis, 64 in flight as the server makes them. */
export async function redisScriptCosts(n: number, log: (s: string) => void): Promise<{ costs: ScriptCost[]; idlePass: Array<{ shards: number; us: number }> }> {
  const redis = await startRedis();
  const costs: ScriptCost[] = [];
  try {
    const store = new RedisStore(redisConnection(redis.url), 'redis');
    /** `count`: how many operations the run made, known before it or counted by it. */
    const measure = async (what: string, count: number | (() => number), run: () => Promise<unknown>) => {
      const before = commandStats(redis);
      await run();
      const after = commandStats(redis);
      const ops = typeof count === 'number' ? count : count();
      let calls = 0;
      let usec = 0;
      for (const cmd of ['evalsha', 'eval']) {
        calls += (after.get(cmd)?.calls ?? 0) - (before.get(cmd)?.calls ?? 0);
        usec += (after.get(cmd)?.usec ?? 0) - (before.get(cmd)?.usec ?? 0);
      }
      costs.push({ what, usPerOp: usec / ops, callsPerOp: calls / ops });
      log(`scaling: ${what}: ${(usec / ops).toFixed(1)} µs of Redis per operation`);
    };
    await measure('incident CREATE (decide-incident, with its outbox entry)', n, () => drive(n, 64, (i) => store.incidents.decide(claim(i, 'k'))));
    await measure('incident SUPPRESS (a re-fire)', n, () => drive(n, 64, (i) => store.incidents.decide(claim(i, 'k'))));
    await measure('incident UPDATE (a changed severity, with its outbox entry)', n, () =>
      drive(n, 64, (i) => store.incidents.decide(claim(i, 'k', 'CRITICAL|0'))),
    );
    await measure('device event applied (next sequence)', n, () =>
      drive(n, 64, (i) =>
        store.devices.apply(
          { tenant: TENANT, device: `d-${i % 1000}`, boot: 'b', sequence: Math.floor(i / 1000) + 1, state: 'UP', observedAt: Date.now() },
          86_400_000,
        ),
      ),
    );
    await measure('SPC violation window claimed', n, () => drive(n, 64, (i) => store.windows.claim(TENANT, `w-${i}`, 300_000, OUTBOX)));
    // Delivery of what the operations above wrote (creates, updates, routed violations, device transitions):
    // fanned out to one adapter, leased, settled; counted as they are settled.
    let deliveries = 0;
    await measure(
      'delivery, per delivery: fan-out, lease and settle',
      () => deliveries,
      async () => {
        while ((await store.deliveries.fanOut(['hook'], 5000)) > 0) {}
        for (;;) {
          const due = await store.deliveries.leaseDue('bench', 60_000, 512);
          if (due.length === 0) break;
          await Promise.all(due.map((d) => store.deliveries.settle(d, { outcome: 'delivered' })));
          deliveries += due.length;
        }
      },
    );
    await store.close();
    // An idle worker's pass (fan-out and lease over every shard, nothing to do): the cost of more shards.
    const idlePass: Array<{ shards: number; us: number }> = [];
    for (const shards of [64, 256, 1024]) {
      redis.cli('FLUSHALL');
      const s = new RedisStore(redisConnection(redis.url), 'redis', { shards });
      const passes = 50;
      const before = commandStats(redis);
      for (let p = 0; p < passes; p++) {
        await s.deliveries.fanOut(['hook'], 1000);
        await s.deliveries.leaseDue('bench', 60_000, 128);
      }
      const after = commandStats(redis);
      const usec = ['evalsha', 'eval'].reduce((a, c) => a + (after.get(c)?.usec ?? 0) - (before.get(c)?.usec ?? 0), 0);
      idlePass.push({ shards, us: usec / passes });
      await s.close();
    }
    return { costs, idlePass };
  } finally {
    await redis.stop();
  }
}

/** Postgres's own time per server-side function call (pg_stat_user_functions, track_functions on for these sessions). */
export async function postgresFunctionCosts(n: number): Promise<Array<{ fn: string; calls: number; usPerCall: number }>> {
  const schema = await freshSchema();
  const pool = new pg.Pool({ connectionString: PG_URL, max: 16, options: `-c search_path=${schema.schema} -c track_functions=all` });
  const store = new PgStore(pool, systemClock, { schema: schema.schema });
  try {
    await drive(n, 16, (i) => store.incidents.decide(claim(i, 'p')));
    await drive(n, 16, (i) => store.incidents.decide(claim(i, 'p', i % 10 === 0 ? 'CRITICAL|0' : 'MAJOR|0')));
    await drive(n, 16, (i) => store.windows.claim(TENANT, `w-${i}`, 300_000, OUTBOX));
    // Function statistics reach the shared view when a session goes idle; give them a moment.
    await new Promise((r) => setTimeout(r, 1500));
    const admin = new pg.Client({ connectionString: PG_URL });
    await admin.connect();
    await admin.query('SELECT pg_stat_clear_snapshot()');
    const r = await admin.query<{ fn: string; calls: string; self: string }>(
      `SELECT funcname AS fn, calls, self_time AS self FROM pg_stat_user_functions WHERE schemaname = $1 AND calls > 0 ORDER BY calls DESC`,
      [schema.schema],
    );
    await admin.end();
    return r.rows.map((row) => ({ fn: row.fn, calls: Number(row.calls), usPerCall: (Number(row.self) * 1000) / Number(row.calls) }));
  } finally {
    await (store as DedupStore).close();
    await schema.drop();
  }
}

export interface ServedCost {
  store: 'sqlite' | 'redis' | 'postgres';
  decisions: number;
  deliveries: number;
  rps: number;
  /** replica process CPU per decision, µs (HTTP, validation, the decision, delivery) */
  replicaUs: number;
  /** store server CPU per decision, µs, delivery included (SQLite: inside the replica) */
  storeUs: number;
}

/**
 * `onceonly serve` on a store with a webhook adapter, the suite's incident mix
 * by wrk for `seconds`, then until every delivery has landed: the CPU the
 * replica and the store server spent, per decision.
 */
export async function servedCost(store: ServedCost['store'], seconds: number, log: (s: string) => void): Promise<ServedCost> {
  const dir = tempDir('onceonly-bench-scaling-');
  const sink = await startCountingSink();
  const redis = store === 'redis' ? await startRedis() : null;
  const schema = store === 'postgres' ? await freshSchema() : null;
  const url = redis ? redis.url : schema ? `${PG_URL}?schema=${schema.schema}` : `sqlite:${dir.path}/s.db`;
  writeFileSync(
    `${dir.path}/c.yml`,
    `failopen: { journal_path: ${dir.path}/j.db, timeout_ms: 5000 }\nadapters: [{ name: hook, type: webhook, url: "${sink.url}" }]\n`,
  );
  const srv = await startListening(process.execPath, ['dist/cli/main.js', 'serve', '--port', '0', '--store', url, '--config', `${dir.path}/c.yml`], {}, ROOT);
  const storeCpu = () => (redis ? redisCpu(redis) : store === 'postgres' ? postgresCpu() : 0);
  try {
    await wrkAsync(srv.url, MIX, 3, [`warm-${store}`]); // JIT, caches, connections
    await drained(srv.url);
    const [r0, s0, d0] = [processCpu(srv.pid), storeCpu(), sink.count()];
    const w = await wrkAsync(srv.url, MIX, seconds, [`scaling-${store}`]);
    await drained(srv.url);
    const [r1, s1, d1] = [processCpu(srv.pid), storeCpu(), sink.count()];
    const cost = {
      store,
      decisions: w.requests,
      deliveries: d1 - d0,
      rps: w.rps,
      replicaUs: ((r1 - r0) * 1e6) / w.requests,
      storeUs: ((s1 - s0) * 1e6) / w.requests,
    };
    log(
      `scaling: served on ${store}: ${Math.round(w.rps)}/s, replica ${cost.replicaUs.toFixed(0)} µs and store ${cost.storeUs.toFixed(0)} µs of CPU per decision`,
    );
    return cost;
  } finally {
    await srv.stop();
    await redis?.stop();
    await schema?.drop();
    await sink.close();
    dir.remove();
  }
}

/**
 * redis-benchmark running the decision script on every master of a cluster
 * at once, one redis-benchmark per master with a shard tag that master owns
 * (what `--cluster` does inside, which refuses clusters of fewer than 3
 * masters): decisions/s in all, and the masters' CPU per call.
 */
export async function clusterCeiling(nodes: RedisServer[], perMaster: number, script: { sha: string; source: string }, args: (tag: string) => string[]) {
  // Each node's own slot range, from its `myself` line of CLUSTER NODES.
  const ranges = nodes.map((node) => {
    const mine = node
      .cli('CLUSTER', 'NODES')
      .split('\n')
      .find((l) => l.includes('myself'))!;
    return mine.trim().split(' ').at(-1)!.split('-').map(Number) as [number, number];
  });
  const owned = (m: number) => {
    for (let s = 0; ; s++) {
      const slot = hashSlot(`{oo:${s}}`);
      if (slot >= ranges[m]![0] && slot <= ranges[m]![1]) return `{oo:${s}}`;
    }
  };
  for (const node of nodes) node.cli('SCRIPT', 'LOAD', script.source);
  const cpu0 = nodes.reduce((a, node) => a + redisCpu(node), 0);
  const calls0 = nodes.reduce((a, node) => a + (commandStats(node).get('evalsha')?.calls ?? 0), 0);
  const started = performance.now();
  const outs = await Promise.all(
    nodes.map((node, m) =>
      promisify(execFile)(
        'redis-benchmark',
        [
          '-p',
          String(node.port),
          '-n',
          String(perMaster),
          '-c',
          '50',
          '-P',
          '16',
          '-r',
          String(Math.round(perMaster / 1.6)),
          '-q',
          'EVALSHA',
          script.sha,
          ...args(owned(m)),
        ],
        { encoding: 'utf8' },
      ),
    ),
  );
  const wall = (performance.now() - started) / 1000;
  const rate = outs.reduce((a, o) => a + Number(/([\d.]+) requests per second/.exec(o.stdout.split('\r').pop() ?? '')?.[1] ?? NaN), 0);
  const cpu = nodes.reduce((a, node) => a + redisCpu(node), 0) - cpu0;
  const calls = nodes.reduce((a, node) => a + (commandStats(node).get('evalsha')?.calls ?? 0), 0) - calls0;
  return { rate, usPerCall: (cpu * 1e6) / calls, coresUsed: cpu / wall };
}

/**
 * Postgres alone (pgbench, 16 clients, 10 s, the decision function over
 * 100,000 keys) on the incidents table as migrated and on the same table
 * hash-partitioned into `partitions` by (tenant, key), taken twice each,
 * interleaved, the better of each kept.
 */
export async function postgresPartitioned(partitions = 16): Promise<{ plain: number; partitioned: number }> {
  const plain = await freshSchema();
  const parted = await freshSchema();
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  try {
    const q = (sql: string) => admin.query(`SET search_path = ${parted.schema}; ${sql}`);
    await q(`ALTER TABLE incidents RENAME TO incidents_plain;
      CREATE TABLE incidents (LIKE incidents_plain INCLUDING DEFAULTS, PRIMARY KEY (tenant, key)) PARTITION BY HASH (tenant, key);
      DROP TABLE incidents_plain;
      CREATE INDEX incidents_expires_at ON incidents (expires_at);
      CREATE INDEX incidents_last_seen ON incidents (tenant, last_seen_at DESC);`);
    for (let p = 0; p < partitions; p++) await q(`CREATE TABLE incidents_p${p} PARTITION OF incidents FOR VALUES WITH (MODULUS ${partitions}, REMAINDER ${p})`);
    const runs = { plain: 0, partitioned: 0 };
    for (let round = 0; round < 2; round++) {
      runs.plain = Math.max(runs.plain, pgbench(plain.schema, PGBENCH.decide));
      runs.partitioned = Math.max(runs.partitioned, pgbench(parted.schema, PGBENCH.decide));
    }
    return runs;
  } finally {
    await admin.end();
    await plain.drop();
    await parted.drop();
  }
}
