/**
 * Sections 3 and 4: what a live key costs in memory, and whether a decision
 * stays as cheap as the live set grows from 10^4 to 10^7 keys (Redis and
 * SQLite). Live keys are loaded straight into the store's own format, then
 * the mix runs with its re-fires spread over the whole live set.
 */
import { statSync } from 'node:fs';
import Database from 'better-sqlite3';
import { createClient } from '@redis/client';
import { systemClock } from '../../src/core/clock.js';
import { redisConnection } from '../../src/store/redis/connection.js';
import { keyLayout } from '../../src/store/redis/keys.js';
import { RedisStore } from '../../src/store/redis/redis-store.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { startRedis } from '../../test/helpers/redis.js';
import { tempDir } from '../../test/helpers/tmp.js';
import { decide, GRACE_MS, TENANT, TTL_MS } from '../backends/backend.js';
import { int, ratio, table, targetAtLeast, targetAtMost, x, type Section, type Target } from '../report.js';
import { concurrent, liveSetMix, sequential } from '../workload.js';

/** The default layout's keys (64 shards), as a store opened without `shards` uses them. */
const { allShards, incidentRecordKey, liveIndex } = keyLayout();

const OPS = Number(process.env.GROWTH_OPS ?? 100_000);
const LIVE_PREFIX = 'g';
const liveKey = (i: number) => `dedup:${LIVE_PREFIX}${i}`;

interface Level {
  live: number;
  rate: number;
  p99: number;
  bytesPerKey: number;
  /** SQLite only: a bare INSERT … ON CONFLICT of the same keys, 1,024 to a transaction */
  bare?: number;
  /** Redis only: the server's own CPU time per decision over the level's run (INFO commandstats) */
  serverUs?: number;
}

/**
 * Redis's own account of the script calls since the last CONFIG RESETSTAT:
 * microseconds of its single thread per decision, whatever any client did.
 * Per decision, not per EVALSHA: claims made together share one call.
 */
function scriptUsPerDecision(commandstats: string, decisions: number): number {
  const m = /cmdstat_evalsha:calls=\d+,usec=(\d+)/.exec(commandstats);
  return m ? Number(m[1]) / decisions : NaN;
}

function levelsUpTo(max: number) {
  const out: number[] = [];
  for (let n = 10_000; n <= max; n *= 10) out.push(n);
  return out;
}

async function measureLevel(run: (op: { key: string; fp: string }) => unknown, live: number, inflight: number) {
  // A warm-up at every level, so the first level is not also the one that pays for JIT and script loading.
  await concurrent(run, liveSetMix(20_000, `w${live}-`, live, LIVE_PREFIX), inflight);
  const rate = await concurrent(run, liveSetMix(OPS, `c${live}-`, live, LIVE_PREFIX), inflight);
  const seq = await sequential(run, liveSetMix(Math.min(10_000, OPS), `s${live}-`, live, LIVE_PREFIX));
  return { rate, p99: seq.p99, decisions: 20_000 + OPS + Math.min(10_000, OPS) };
}

async function redisGrowth(levels: number[], log: (s: string) => void) {
  const redis = await startRedis();
  const store = new RedisStore(redisConnection(redis.url), 'redis', { expiredGraceMs: GRACE_MS });
  const loader = createClient({ url: redis.url });
  await loader.connect();
  const usedMemory = () => Number(/used_memory:(\d+)/.exec(redis.cli('INFO', 'memory'))![1]);
  const out: Level[] = [];
  let sampleBytes = NaN;
  let indexBytes = NaN;
  try {
    let loaded = 0;
    for (const live of levels) {
      log(`growth: redis, loading to ${int(live)} live keys`);
      const now = Date.now();
      const before = { bytes: usedMemory(), keys: loaded };
      // The record decide-incident.lua writes: "createdAt,lastSeenDelta,ttl,refires,updates,fingerprint".
      const value = `${now},0,${TTL_MS},0,0,MAJOR|0`;
      for (; loaded < live; ) {
        const batch = [];
        for (const end = Math.min(live, loaded + 20_000); loaded < end; loaded++) {
          const entry = liveIndex(TENANT, liveKey(loaded));
          batch.push(loader.set(incidentRecordKey(TENANT, liveKey(loaded)), value, { PX: TTL_MS + GRACE_MS }));
          // Its entry in the shard's live index, as the decision writes it.
          batch.push(loader.zAdd(entry.key, { score: now + TTL_MS, value: entry.member }));
        }
        await Promise.all(batch);
      }
      // Over the keys this step loaded only: the decisions measured between steps add outbox entries.
      const bytesPerKey = (usedMemory() - before.bytes) / (live - before.keys);
      if (live === 10_000) {
        const sample = Array.from({ length: 1000 }, (_, i) => incidentRecordKey(TENANT, liveKey(i * 10)));
        sampleBytes = sample.reduce((s, k) => s + Number(redis.cli('MEMORY', 'USAGE', k)), 0) / sample.length;
        const shards = allShards('lv');
        const entries = shards.reduce((s, k) => s + Number(redis.cli('ZCARD', k)), 0);
        indexBytes = shards.reduce((s, k) => s + Number(redis.cli('MEMORY', 'USAGE', k, 'SAMPLES', '0')), 0) / entries;
      }
      log(`growth: redis, deciding at ${int(live)} live keys`);
      redis.cli('CONFIG', 'RESETSTAT');
      const measured = await measureLevel(decide(store), live, 256);
      out.push({ live, bytesPerKey, ...measured, serverUs: scriptUsPerDecision(redis.cli('INFO', 'commandstats'), measured.decisions) });
    }
  } finally {
    await store.close();
    await loader.close();
    await redis.stop();
  }
  return { levels: out, sampleBytes, indexBytes };
}

async function sqliteGrowth(levels: number[], log: (s: string) => void) {
  const dir = tempDir('onceonly-bench-growth-');
  const path = `${dir.path}/onceonly.db`;
  const store = new SqliteStore(path, systemClock, { synchronous: 'normal', expiredGraceMs: GRACE_MS });
  const loader = new Database(path);
  loader.pragma('journal_mode = WAL');
  loader.pragma('synchronous = NORMAL');
  const insert = loader.prepare(
    `INSERT INTO incidents (tenant, key, fingerprint, created_at, last_seen_at, refires, updates, expires_at) VALUES ('${TENANT}', ?, 'MAJOR|0', ?, ?, 0, 0, ?)`,
  );
  // The ceiling at each size: the same upsert with no decision logic, batched as group commit batches.
  const upsert = loader.prepare(
    `INSERT INTO incidents (tenant, key, fingerprint, created_at, last_seen_at, refires, updates, expires_at) VALUES ('${TENANT}', ?, ?, ?, ?, 0, 0, ?)
     ON CONFLICT (tenant, key) DO UPDATE SET fingerprint = excluded.fingerprint, last_seen_at = excluded.last_seen_at, refires = refires + 1, expires_at = excluded.expires_at`,
  );
  const upsertBatch = loader.transaction((ops: Array<{ key: string; fp: string }>) => {
    const now = Date.now();
    for (const o of ops) upsert.run(o.key, o.fp, now, now, now + TTL_MS);
  });
  const bare = (live: number) => {
    const ops = liveSetMix(OPS, `b${live}-`, live, LIVE_PREFIX);
    const t = performance.now();
    for (let i = 0; i < ops.length; i += 1024) upsertBatch(ops.slice(i, i + 1024));
    return Math.round(ops.length / ((performance.now() - t) / 1000));
  };
  const load = loader.transaction((from: number, to: number, now: number) => {
    for (let i = from; i < to; i++) insert.run(liveKey(i), now, now, now + TTL_MS);
  });
  const out: Level[] = [];
  try {
    let loaded = 0;
    for (const live of levels) {
      log(`growth: sqlite, loading to ${int(live)} live rows`);
      const fileBytes = () => {
        loader.pragma('wal_checkpoint(TRUNCATE)');
        return Number(loader.pragma('page_count', { simple: true })) * Number(loader.pragma('page_size', { simple: true }));
      };
      const before = { bytes: fileBytes(), rows: loaded };
      for (; loaded < live; loaded = Math.min(live, loaded + 100_000)) load(loaded, Math.min(live, loaded + 100_000), Date.now());
      // Over the rows this step loaded only (the table, its primary key and its expiry index).
      const bytesPerKey = (fileBytes() - before.bytes) / (live - before.rows);
      log(`growth: sqlite, deciding at ${int(live)} live rows (file ${(statSync(path).size / 2 ** 20).toFixed(0)} MiB)`);
      out.push({ live, bytesPerKey, ...(await measureLevel(decide(store), live, 256)), bare: bare(live) });
    }
  } finally {
    loader.close();
    await store.close();
    dir.remove();
  }
  return out;
}

/**
 * Whether the fall is Redis or us, from Redis's own figure: if the server's
 * time per call grew by about as much as the rate fell, the same script
 * doing the same O(1) work costs Redis more on a bigger keyspace (CPU cache
 * and TLB misses over gigabytes of dictionary), and no client change can win
 * it back.
 */
function redisGrowthCause(ls: Level[]): string {
  const first = ls[0]!;
  const last = ls[ls.length - 1]!;
  const slower = ratio(first.rate, last.rate);
  const serverSlower = ratio(last.serverUs ?? NaN, first.serverUs ?? NaN);
  const verdict =
    serverSlower >= 1 + 0.7 * (slower - 1)
      ? 'Redis itself: the server spends that much more of its one thread on each identical decision, so the client is not the cause'
      : 'not Redis alone: the server time per decision grew less than the rate fell, so part of the fall is on the client side';
  return `decisions/s fell ${x(slower)} from ${int(first.live)} to ${int(last.live)} live keys while Redis's own time per decision (INFO commandstats) went from ${first.serverUs?.toFixed(1)} µs to ${last.serverUs?.toFixed(1)} µs (${x(serverSlower)}): ${verdict}`;
}

export async function growthSection(max: number, log: (s: string) => void): Promise<Section> {
  const levels = levelsUpTo(max);
  const redis = await redisGrowth(levels, log);
  const sqlite = await sqliteGrowth(levels, log);
  const rows = (name: string, ls: Level[], unit: string) =>
    ls.map((l) => [
      name,
      int(l.live),
      int(l.rate),
      x(ratio(l.rate, ls[0]!.rate)),
      int(l.p99),
      `${l.bytesPerKey.toFixed(0)} ${unit}`,
      l.bare === undefined ? '—' : `${int(l.bare)} (${x(ratio(l.bare, ls[0]!.bare!))})`,
      l.serverUs === undefined ? '—' : `${l.serverUs.toFixed(1)} (${x(ratio(l.serverUs, ls[0]!.serverUs!))})`,
    ]);
  const targets: Target[] = [];
  const flat = (name: string, ls: Level[], note?: string) => {
    const last = ls[ls.length - 1]!;
    if (ls.length > 1)
      targets.push(targetAtLeast(`${name}: decisions/s at ${int(last.live)} live keys vs at 10,000`, ratio(last.rate, ls[0]!.rate), 0.85, note));
  };
  flat('redis', redis.levels, redisGrowthCause(redis.levels));
  const sqLast = sqlite[sqlite.length - 1];
  flat(
    'sqlite',
    sqlite,
    sqLast?.bare
      ? `SQLite's own B-tree: a bare batched upsert of the same keys falls to ${x(ratio(sqLast.bare, sqlite[0]!.bare!))} over the same range (random keys dirty a different leaf and index page each, and WAL logs whole pages); the decision keeps more of its speed than the bare statement does`
      : undefined,
  );
  const million = redis.levels.find((l) => l.live === 1_000_000) ?? redis.levels[redis.levels.length - 1]!;
  targets.push(
    targetAtMost(
      'redis: bytes per live incident (MEMORY USAGE: the record, mean of 1,000, plus its live-index entry)',
      redis.sampleBytes + redis.indexBytes,
      150,
      'B',
    ),
  );
  return {
    title: 'Live-set growth and memory',
    body: [
      `Live incidents are loaded straight into each store's own record format; then ${int(OPS)} decisions of the mix run with 256 in flight (decisions/s), and 10,000 one at a time (p99), with every re-fire aimed at a random key of the whole live set. Memory per live key: what loading that level's new keys added to Redis \`used_memory\` (key, record, expiry and dictionary entries: all of it) or to the SQLite file (page_count × page_size after a checkpoint: table, primary key and expiry index), over the keys added.`,
      table(
        [
          'store',
          'live keys',
          'decisions/s',
          'vs 10^4',
          'sequential p99 µs',
          'memory per live key',
          'bare upsert/s (vs 10^4)',
          'Redis µs per decision (vs 10^4)',
        ],
        [...rows('redis', redis.levels, 'B of used_memory'), ...rows('sqlite', sqlite, 'B of file')],
      ),
      `Redis \`MEMORY USAGE\` of one incident record (mean of 1,000): ${redis.sampleBytes.toFixed(1)} B, and of its entry in the live index the exact live count reads: ${redis.indexBytes.toFixed(1)} B; \`used_memory\` per key at ${int(million.live)} live keys: ${million.bytesPerKey.toFixed(0)} B (adds the keyspace and expiry dictionaries).`,
    ],
    targets,
  };
}
