/**
 * Section: failopen. What a decision's wait looks like to the fail-open
 * judge, on this machine, idle and busy: each decision through the
 * fail-open store with its default settings (64 in flight), timed two ways:
 * wall time from call to answer (what a plain timer judged before), and the
 * store's own time (wall time less what this process's event loop stalled
 * meanwhile, what the judge uses now). "Busy" runs three processes that
 * spin beside it on the 2 cores. Counts how many calls passed the default
 * timeout each way, and how many were answered provisionally.
 * `npm run bench -- failopen` prints it and writes it into docs/operations.md.
 */
import { spawn } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { join } from 'node:path';
import pg from 'pg';
import { systemClock } from '../../src/core/clock.js';
import type { SharedStore } from '../../src/store/contract/index.js';
import { FailOpenStore } from '../../src/store/failopen/fail-open-store.js';
import { Journal } from '../../src/store/failopen/journal.js';
import { PgStore } from '../../src/store/postgres/pg-store.js';
import { openPool } from '../../src/store/postgres/pool.js';
import { migrate } from '../../src/store/postgres/migrate.js';
import { redisConnection } from '../../src/store/redis/connection.js';
import { RedisStore } from '../../src/store/redis/redis-store.js';
import { PG_URL } from '../../test/helpers/postgres.js';
import { startRedis } from '../../test/helpers/redis.js';
import { tempDir } from '../../test/helpers/tmp.js';
import { table, type Section } from '../report.js';

const CALLS = Number(process.env.FAILOPEN_CALLS ?? 20_000);
const IN_FLIGHT = 64;

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(p * s.length))] ?? NaN;
};

interface Run {
  store: string;
  load: string;
  timeoutMs: number;
  wall: number[];
  own: number[];
  provisional: number;
}

type Load = 'idle' | 'busy' | 'busy+loop';
const LOADS: Record<Load, string> = {
  idle: 'idle',
  busy: 'busy: 3 spinning processes',
  'busy+loop': "busy, and this process's own loop busy 40 ms of every 50 (as a replica parsing large batches)",
};

async function measure(store: string, inner: SharedStore, timeoutMs: number, load: Load, log: (s: string) => void): Promise<Run> {
  const dir = tempDir();
  const fo = new FailOpenStore(inner, new Journal(join(dir.path, 'j.db'), systemClock), systemClock, { timeoutMs });
  const spinners = load === 'idle' ? [] : Array.from({ length: 3 }, () => spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' }));
  // Synchronous work on this process's own loop: what a replica does parsing and answering other requests.
  const hog =
    load === 'busy+loop'
      ? setInterval(() => {
          const until = performance.now() + 40;
          while (performance.now() < until) {}
        }, 50)
      : null;
  const run: Run = { store, load: LOADS[load], timeoutMs, wall: [], own: [], provisional: 0 };
  try {
    await fo.init();
    log(`failopen: ${store}, ${run.load}`);
    let next = 0;
    await Promise.all(
      Array.from({ length: IN_FLIGHT }, async () => {
        while (next < CALLS) {
          const i = next++;
          const key = `dedup:${(i % (CALLS / 4)).toString(16).padStart(32, '0')}`;
          const t0 = performance.now();
          const s0 = fo.stalls.now();
          const r = await fo.incidents.decide({ tenant: 'bench', key, fingerprint: 'MAJOR|0', ttlMs: 600_000 });
          const wall = performance.now() - t0;
          run.wall.push(wall);
          run.own.push(wall - (fo.stalls.now() - s0));
          if (r.provisional) run.provisional++;
        }
      }),
    );
  } finally {
    if (hog) clearInterval(hog);
    for (const p of spinners) p.kill('SIGKILL');
    await fo.close();
    dir.remove();
  }
  return run;
}

export async function failopenSection(log: (s: string) => void): Promise<Section> {
  const runs: Run[] = [];
  for (const load of Object.keys(LOADS) as Load[]) {
    const redis = await startRedis();
    try {
      runs.push(await measure('Redis', new RedisStore(redisConnection(redis.url)), 50, load, log));
    } finally {
      await redis.stop();
    }
    const schema = `oo_bench_failopen_${process.pid}`;
    const pool = openPool(PG_URL, schema, 10);
    const admin = new pg.Pool({ connectionString: PG_URL, max: 1 });
    try {
      await migrate(pool, schema);
      runs.push(await measure('Postgres', new PgStore(pool, systemClock, { schema }), 300, load, log));
    } finally {
      await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await admin.end();
    }
  }
  const f = (x: number) => x.toFixed(1);
  return {
    title: "Fail-open: a decision's wait, as wall time and as the store's own time",
    body: [
      `${CALLS.toLocaleString('en-US')} decisions per row (a quarter of them new keys), ${IN_FLIGHT} in flight, through the fail-open store with its default settings. "wall" is call to answer; "store's own" is that less what this process's event loop stalled meanwhile (the time fail-open judges). "past the timeout by wall" is how many a plain timer would have blamed on the store. Provisional answers need three failures in a row.`,
      table(
        [
          'store',
          'load',
          'timeout',
          'wall p50 / p99 / p99.9 / max ms',
          "store's own p50 / p99 / p99.9 / max ms",
          'past the timeout by wall',
          "past it by the store's own",
          'provisional answers',
        ],
        runs.map((r) => [
          r.store,
          r.load,
          `${r.timeoutMs} ms`,
          [0.5, 0.99, 0.999, 1].map((p) => f(pct(r.wall, p))).join(' / '),
          [0.5, 0.99, 0.999, 1].map((p) => f(pct(r.own, p))).join(' / '),
          String(r.wall.filter((x) => x > r.timeoutMs).length),
          String(r.own.filter((x) => x > r.timeoutMs).length),
          String(r.provisional),
        ]),
      ),
    ],
    targets: [],
  };
}
