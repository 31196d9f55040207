/**
 * Section: replay. How long a replica that failed open stays off the store
 * once the store answers again: the time from opening a fail-open store on a
 * journal of N provisional decisions (as a replica restarted after an
 * outage, or one whose probes just came back, finds it) to its switch back
 * to the store, with the keys replayed one after another (the old way, the
 * baseline) and `replayConcurrency` at a time (the default), on Redis and on
 * Postgres, measured in the same run. Every key is checked live in the store
 * after each run, so a figure never counts a replay that lost keys.
 * `npm run bench -- replay` prints it.
 */
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { systemClock } from '../../src/core/clock.js';
import type { SharedStore } from '../../src/store/contract/index.js';
import { FailOpenStore } from '../../src/store/failopen/fail-open-store.js';
import { Journal } from '../../src/store/failopen/journal.js';
import { migrate } from '../../src/store/postgres/migrate.js';
import { PgStore } from '../../src/store/postgres/pg-store.js';
import { openPool } from '../../src/store/postgres/pool.js';
import { redisConnection } from '../../src/store/redis/connection.js';
import { RedisStore } from '../../src/store/redis/redis-store.js';
import { PG_URL } from '../../test/helpers/postgres.js';
import { startRedis } from '../../test/helpers/redis.js';
import { tempDir } from '../../test/helpers/tmp.js';
import { type Section, table, x } from '../report.js';

const KEYS = Number(process.env.REPLAY_KEYS ?? 500);
const ROUNDS = 3;

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** One replay of KEYS journaled decisions into a fresh tenant of `open()`'s store; ms from open to back on the store. */
async function replayOnce(open: () => SharedStore, concurrency: number, round: string): Promise<number> {
  const dir = tempDir();
  const path = join(dir.path, 'journal.db');
  const tenant = `bench-${round}`;
  const journal = new Journal(path, systemClock);
  for (let i = 0; i < KEYS; i++) {
    await journal.incidents.decide({ tenant, key: `dedup:${i.toString(16).padStart(32, '0')}`, fingerprint: 'MAJOR|0', ttlMs: 600_000 });
  }
  await journal.close();
  let back: () => void = () => {};
  const switched = new Promise<void>((r) => (back = r));
  const t0 = performance.now();
  const fo = new FailOpenStore(open(), new Journal(path, systemClock), systemClock, {
    timeoutMs: 1000,
    probeIntervalMs: 20,
    recoverAfter: 1,
    replayConcurrency: concurrency,
    events: { degraded: (on) => (on ? undefined : back()) },
  });
  try {
    await fo.init();
    await switched;
    const ms = performance.now() - t0;
    for (let i = 0; i < KEYS; i += 97) {
      if (!(await fo.incidents.get(tenant, `dedup:${i.toString(16).padStart(32, '0')}`))) throw new Error(`replay lost key ${i} (${round})`);
    }
    return ms;
  } finally {
    await fo.close();
    dir.remove();
  }
}

export async function replaySection(log: (s: string) => void): Promise<Section> {
  const rows: Array<Array<string | number>> = [];
  const measure = async (store: string, open: () => SharedStore) => {
    const one: number[] = [];
    const many: number[] = [];
    // Taken in turn, so a busy neighbour weighs on both alike.
    for (let r = 0; r < ROUNDS; r++) {
      one.push(await replayOnce(open, 1, `${store}-1-${r}`));
      many.push(await replayOnce(open, 16, `${store}-16-${r}`));
      log(`replay: ${store} round ${r + 1}: one at a time ${one.at(-1)!.toFixed(0)} ms, 16 at a time ${many.at(-1)!.toFixed(0)} ms`);
    }
    rows.push([store, KEYS, median(one).toFixed(0), median(many).toFixed(0), x(median(one) / median(many))]);
  };
  const redis = await startRedis();
  try {
    await measure('Redis', () => new RedisStore(redisConnection(redis.url)));
  } finally {
    await redis.stop();
  }
  const schema = `oo_bench_replay_${process.pid}`;
  const migrating = openPool(PG_URL, schema, 1);
  await migrate(migrating, schema);
  await migrating.end();
  try {
    await measure('Postgres', () => new PgStore(openPool(PG_URL, schema, 10), systemClock, { schema }));
  } finally {
    const admin = new pg.Client({ connectionString: PG_URL });
    await admin.connect();
    await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await admin.end();
  }
  return {
    title: 'Fail-open: back on the store after the journal replay',
    body: [
      `From opening a fail-open store on a journal of ${KEYS} provisional decisions to its switch back to the store (probes 20 ms apart, one healthy probe), the median of ${ROUNDS} rounds taken in turn: the keys replayed one after another (the baseline), and 16 at a time (the default). Every replay is checked to have left its keys live.`,
      table(['store', 'journaled keys', 'one at a time, ms', '16 at a time, ms', 'faster'], rows),
    ],
    targets: [],
  };
}
