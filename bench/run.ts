/**
 * The benchmark suite: `npm run bench`. Starts what it needs (its
 * own redis-server and a 3-master Redis Cluster on free ports; the machine's
 * Postgres), measures every comparison in the same run, prints one report
 * and writes it into docs/benchmarks.md. No assertions: figures and ratios,
 * with the targets they were held to.
 *
 *   npm run bench                      everything
 *   npm run bench -- decisions http    only those sections (decisions, path, http, batches, ingest, growth, memory)
 *   N=20000 GROWTH_MAX=1000000 npm run bench     smaller runs
 *   BACKENDS=postgres npm run bench -- decisions   the store decisions on some stores only
 *   PROFILE=1 npm run bench -- http    also --cpu-prof the servers into bench/profiles/
 *   npm run bench -- scaling           the capacity model's inputs and its validation (writes docs/scaling.md)
 *   npm run bench -- guard             what the layout guard costs the decision script (writes docs/scaling.md)
 *   npm run bench -- failopen          a decision's wait, wall time and the store's own, idle and busy (writes docs/operations.md)
 *   npm run bench -- replay            back on the store after a journal replay: keys one at a time against 16 at a time
 *   npm run bench -- delivery          the outbox draining against a bare client, and send-to-receiver latency at 1,000 alerts/s
 *   npm run bench -- lease             a delivery lease pass beside one key's backlog, SQLite and Postgres
 *   npm run bench -- bounds            another tenant's decision latency while one tenant presses on each bound
 *   npm run bench -- keyed             one tenant's throughput with and without Idempotency-Keys (SQLite, Postgres)
 *   npm run bench -- routes            decisions and deliveries with and without a 20-node routing tree
 *   npm run bench -- history           decisions with and without each key's history, every store; a debug log line's cost
 *   npm run bench -- failing           re-fires beside 20,000 failing deliveries of other keys; a backlog drained (memory, SQLite)
 */
import { execFileSync } from 'node:child_process';
import os from 'node:os';
import pg from 'pg';
import { startRedis, startRedisCluster } from '../test/helpers/redis.js';
import { PG_URL } from '../test/helpers/postgres.js';
import { memoryBackend } from './backends/memory.js';
import { postgresBackend } from './backends/postgres.js';
import { redisBackend } from './backends/redis.js';
import { sqliteBackend } from './backends/sqlite.js';
import { targetsTable, writeBetween, writeDoc, type Section } from './report.js';
import { scalingSection } from './sections/scaling.js';
import { guardSection } from './sections/guard.js';
import { failopenSection } from './sections/failopen.js';
import { replaySection } from './sections/replay.js';
import { deliverySection } from './sections/delivery.js';
import { leaseSection } from './sections/lease.js';
import { boundsSection } from './sections/bounds.js';
import { keyedSection } from './sections/keyed.js';
import { fieldsSection } from './sections/fields.js';
import { routesSection } from './sections/routes.js';
import { historySection } from './sections/history.js';
import { failingSection } from './sections/failing.js';
import { causesSection } from './sections/causes.js';
import { decisionsSection, eventsSection, measureBackend, type Sizes } from './sections/decisions.js';
import { growthSection } from './sections/growth.js';
import { httpSection } from './sections/http.js';
import { batchesSection } from './sections/batches.js';
import { ingestSection } from './sections/ingest.js';
import { pathSection } from './sections/path.js';
import { serverMemorySection } from './sections/server-memory.js';

const ALL = ['decisions', 'path', 'http', 'batches', 'ingest', 'growth', 'memory'] as const;
/** Sections run only when named: scaling and guard write docs/scaling.md, failopen docs/operations.md, not this page. */
const ON_REQUEST = [
  'scaling',
  'guard',
  'failopen',
  'replay',
  'delivery',
  'lease',
  'bounds',
  'keyed',
  'fields',
  'routes',
  'history',
  'causes',
  'failing',
] as const;
const asked = process.argv.slice(2).filter((a) => !a.startsWith('-'));
for (const a of asked) {
  if (![...ALL, ...ON_REQUEST].includes(a as never)) throw new Error(`unknown section ${a}: choose from ${[...ALL, ...ON_REQUEST].join(', ')}`);
}
const want = (s: (typeof ALL)[number]) => asked.length === 0 || asked.includes(s);

const N = Number(process.env.N ?? 100_000);
/** BACKENDS=postgres,redis: the decisions section on those stores only (all five by default). */
const BACKENDS = process.env.BACKENDS?.split(',').map((b) => b.trim());
const STORES = ['memory', 'sqlite', 'redis', 'redis-cluster', 'postgres'] as const;
for (const b of BACKENDS ?? []) if (!(STORES as readonly string[]).includes(b)) throw new Error(`unknown backend ${b}: choose from ${STORES.join(', ')}`);
const backend = (name: (typeof STORES)[number]) => !BACKENDS || BACKENDS.includes(name);
const sizes: Sizes = { n: N, seq: Math.min(N, 20_000) };
const GROWTH_MAX = Number(process.env.GROWTH_MAX ?? 10_000_000);
const started = Date.now();
const log = (s: string) => console.error(`[bench ${((Date.now() - started) / 1000).toFixed(0).padStart(4)} s] ${s}`);

async function versions() {
  const redis = execFileSync('redis-server', ['--version'], { encoding: 'utf8' }).match(/v=(\S+)/)?.[1] ?? '?';
  let postgres = 'not reachable';
  try {
    const admin = new pg.Client({ connectionString: PG_URL });
    await admin.connect();
    const r = await admin.query<{ v: string; s: string }>("SELECT current_setting('server_version') AS v, current_setting('synchronous_commit') AS s");
    postgres = `${r.rows[0]!.v.split(' ')[0]} (synchronous_commit ${r.rows[0]!.s})`;
    await admin.end();
  } catch {}
  return { redis, postgres };
}

const sections: Section[] = [];
if (want('decisions')) {
  const figures = [];
  if (backend('memory')) figures.push(await measureBackend(await memoryBackend(), sizes, log));
  if (backend('sqlite')) figures.push(await measureBackend(await sqliteBackend(), sizes, log));
  if (backend('redis')) {
    const redis = await startRedis();
    try {
      figures.push(await measureBackend(await redisBackend(redis.url, [redis.port], false), sizes, log));
    } finally {
      await redis.stop();
    }
  }
  if (backend('redis-cluster')) {
    const cluster = await startRedisCluster(3);
    try {
      figures.push(
        await measureBackend(
          await redisBackend(
            cluster.url,
            cluster.nodes.map((n) => n.port),
            true,
          ),
          sizes,
          log,
        ),
      );
    } finally {
      await cluster.stop();
    }
  }
  if (backend('postgres')) figures.push(await measureBackend(await postgresBackend(), { n: Math.round(sizes.n / 5), seq: Math.round(sizes.seq / 4) }, log));
  sections.push(decisionsSection(figures, sizes), eventsSection(figures));
}
if (want('path')) sections.push(await pathSection(log));
if (want('http')) sections.push(await httpSection(log));
if (want('batches')) sections.push(await batchesSection(log));
if (want('ingest')) sections.push(await ingestSection(log));
if (want('growth')) sections.push(await growthSection(GROWTH_MAX, log));
if (want('memory')) sections.push(await serverMemorySection(log));
let scaling: Section | null = null;
if (asked.includes('scaling')) sections.push((scaling = await scalingSection(log)));
let guard: Section | null = null;
if (asked.includes('guard')) sections.push((guard = await guardSection(log)));
if (asked.includes('lease')) sections.push(await leaseSection(log));
if (asked.includes('bounds')) sections.push(await boundsSection(log));
if (asked.includes('keyed')) sections.push(await keyedSection(log));
if (asked.includes('fields')) sections.push(await fieldsSection(log));
if (asked.includes('routes')) sections.push(await routesSection(log));
if (asked.includes('history')) sections.push(await historySection(log));
if (asked.includes('causes')) sections.push(await causesSection(log));
if (asked.includes('failing')) sections.push(await failingSection(log));
if (asked.includes('replay')) sections.push(await replaySection(log));
if (asked.includes('delivery')) sections.push(await deliverySection(log));
let failopen: Section | null = null;
if (asked.includes('failopen')) sections.push((failopen = await failopenSection(log)));

const v = await versions();
const cmd = `npm run bench${asked.length ? ` -- ${asked.join(' ')}` : ''}`;
const envs = ['N', 'GROWTH_MAX', 'BACKENDS']
  .filter((k) => process.env[k])
  .map((k) => `${k}=${process.env[k]} `)
  .join('');
const targets = sections.flatMap((s) => s.targets);
const report = [
  `Measured ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC by \`${envs}${cmd}\` in ${((Date.now() - started) / 60000).toFixed(1)} min on ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'cpu'}, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB, ${os.platform()} ${os.release()}; Node ${process.version}, Redis ${v.redis}, PostgreSQL ${v.postgres}.`,
  '',
  '### Targets',
  '',
  targetsTable(targets),
  ...sections.flatMap((s) => ['', `### ${s.title}`, '', s.body.join('\n\n')]),
].join('\n');
console.log(report);
if (scaling && !process.env.SCALING_N && !process.env.HTTP_SECONDS) {
  writeBetween(
    'docs/scaling.md',
    'scaling',
    [
      `Measured ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC by \`npm run bench -- scaling\`; Node ${process.version}, Redis ${v.redis}, PostgreSQL ${v.postgres}.`,
      '',
      scaling.body.join('\n\n'),
    ].join('\n'),
  );
  log('written to docs/scaling.md');
}
if (guard) {
  writeBetween(
    'docs/scaling.md',
    'guard',
    [
      `Measured ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC by \`npm run bench -- guard\`; Redis ${v.redis}.`,
      '',
      guard.body.join('\n\n'),
    ].join('\n'),
  );
  log('written to docs/scaling.md');
}
if (failopen && !process.env.FAILOPEN_CALLS) {
  writeBetween(
    'docs/operations.md',
    'failopen',
    [
      `Measured ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC by \`npm run bench -- failopen\`; Node ${process.version}, Redis ${v.redis}, PostgreSQL ${v.postgres}.`,
      '',
      failopen.body.join('\n\n'),
    ].join('\n'),
  );
  log('written to docs/operations.md');
}
if (asked.length === 0 && !process.env.N && !process.env.GROWTH_MAX && !BACKENDS) {
  if (writeDoc(report)) log('written to docs/benchmarks.md');
} else log('a partial or resized run: docs/benchmarks.md left as it is (it holds full runs only)');
