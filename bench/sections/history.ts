/**
 * Section: history. What keeping each key's history costs the decisions, on
 * every store: the engine deciding the suite's incident mix (50% new, 40%
 * unchanged re-fires, 10% changes) with the store's own concurrency, without
 * a history and with one (the recorder writing every decision in batches;
 * a round with history ends only once its last batch is written). Then one
 * debug log line per decision against none, on the memory store, and the
 * bytes a live key and its history take on Redis.
 * `npm run bench -- history`.
 */
import { writeFileSync } from 'node:fs';
import { Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import { systemClock } from '../../src/core/clock.js';
import { Deduplicator, type DecisionObserver } from '../../src/engine/deduplicator.js';
import { HistoryRecorder } from '../../src/history/recorder.js';
import { decisionLog } from '../../src/app/observers.js';
import type { RedisStore } from '../../src/store/redis/redis-store.js';
import { startRedis, startRedisCluster } from '../../test/helpers/redis.js';
import { freshSchema, PG_URL } from '../../test/helpers/postgres.js';
import { tempDir } from '../../test/helpers/tmp.js';
import { startListening, wrk } from '../http/wrk.js';
import { memoryBackend } from '../backends/memory.js';
import { postgresBackend } from '../backends/postgres.js';
import { redisBackend } from '../backends/redis.js';
import { sqliteBackend } from '../backends/sqlite.js';
import { OUTBOX, TENANT, TTL_MS, type Backend } from '../backends/backend.js';
import { concurrent, incidentMix, type IncidentOp } from '../workload.js';
import { floorOf } from './history-floor.js';
import { int, table, targetAtMost, type Section } from '../report.js';

const ROUNDS = 5;
// Rounds long enough (a third of a second on memory) that one pause of the machine does not make a round's figure.
const N = Number(process.env.HISTORY_N ?? 50_000);
const LIMITS = { maxEvents: 500, keepMs: 7 * 86_400_000 };
/** HISTORY_STORES=sqlite,postgres: those stores only (all by default). */
const ONLY = process.env.HISTORY_STORES?.split(',').map((x) => x.trim());
const on = (store: string) => !ONLY || ONLY.includes(store);

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const MIX = fileURLToPath(new URL('../http/mix.lua', import.meta.url));
const HTTP_SECONDS = Number(process.env.HTTP_SECONDS ?? 6);
const HTTP_ROUNDS = 3;

const best = (xs: number[]) => Math.max(...xs);
const loss = (off: number, on: number) => ((off - on) / off) * 100;
const signed = (pct: number) => `${pct >= 0 ? '−' : '+'}${Math.abs(pct).toFixed(1)}%`;

interface Row {
  store: string;
  off: number[];
  on: number[];
  /** the floor's rounds (history-floor.ts), where it is measured */
  floor?: number[];
}

/** Decisions/s of `dedup` over the ops, `done` awaited inside the timing (the history's last batch). */
async function rate(dedup: Deduplicator, ops: IncidentOp[], inflight: number, done: () => Promise<void> = async () => {}): Promise<number> {
  const t = performance.now();
  await concurrent((op: IncidentOp) => dedup.decide({ tenant: TENANT, key: op.key, fingerprint: op.fp, ttlMs: TTL_MS, outbox: OUTBOX }), ops, inflight);
  await done();
  return Math.round(ops.length / ((performance.now() - t) / 1000));
}

async function measure(b: Backend, n: number, log: (s: string) => void, cluster = false): Promise<Row> {
  // A batch the store refused is lost, not written: it would make the rounds with history look cheap, so it fails the section.
  let lost: unknown = null;
  const recorder = new HistoryRecorder({
    store: b.store.history,
    limits: () => LIMITS,
    clock: systemClock,
    lost: (events, err) => {
      lost ??= err ?? new Error(`${events} events waited past the bound`);
    },
  });
  const off = new Deduplicator({ store: b.store });
  const on = new Deduplicator({ store: b.store, history: { recorder, replica: 'bench' } });
  // The same recorder over the floor's store: the same events built, buffered and folded, then kept at the least cost.
  const floorStore = floorOf(b, cluster);
  const floorRecorder = floorStore && new HistoryRecorder({ store: floorStore, limits: () => LIMITS, clock: systemClock });
  const floor = floorRecorder && new Deduplicator({ store: b.store, history: { recorder: floorRecorder, replica: 'bench' } });
  const row: Row = { store: b.name, off: [], on: [], ...(floor ? { floor: [] } : {}) };
  try {
    // One of each first, not counted: the first decisions of a process run colder code.
    await rate(off, incidentMix(Math.min(n, 2000), `hw0${b.name}`), b.inflight);
    await rate(on, incidentMix(Math.min(n, 2000), `hw1${b.name}`), b.inflight, () => recorder.flush());
    if (floor) await rate(floor, incidentMix(Math.min(n, 2000), `hw2${b.name}`), b.inflight, () => floorRecorder.flush());
    for (let r = 0; r < ROUNDS; r++) {
      row.off.push(await rate(off, incidentMix(n, `hoff${r}${b.name}`), b.inflight));
      row.on.push(await rate(on, incidentMix(n, `hon${r}${b.name}`), b.inflight, () => recorder.flush()));
      if (floor) row.floor?.push(await rate(floor, incidentMix(n, `hfl${r}${b.name}`), b.inflight, () => floorRecorder.flush()));
      const floorNote = row.floor ? ` / ${int(row.floor.at(-1)!)}` : '';
      log(
        `history on ${b.name}, round ${r + 1}: ${int(row.off.at(-1)!)} / ${int(row.on.at(-1)!)}${floorNote} decisions/s (off / on${row.floor ? ' / floor' : ''})`,
      );
      if (lost) throw new Error(`history on ${b.name}: the store lost events, so the round measured less than a history`, { cause: lost });
    }
  } finally {
    await b.close();
  }
  return row;
}

/** Decisions/s on a memory store with no observer, and with one debug line per decision (pino at debug, into a sink that keeps nothing). */
async function debugCost(n: number, log: (s: string) => void): Promise<{ quiet: number[]; debug: number[]; info: number[] }> {
  const b = await memoryBackend();
  const devNull = new Writable({ write: (_c, _e, cb) => cb() });
  const logger = (level: string) => pino({ level }, devNull);
  const at = (observer?: DecisionObserver) => new Deduplicator({ store: b.store, ...(observer ? { observer } : {}) });
  const quiet = at();
  const info = at(decisionLog(logger('info')));
  const debug = at(decisionLog(logger('debug')));
  const out = { quiet: [] as number[], info: [] as number[], debug: [] as number[] };
  await rate(quiet, incidentMix(2000, 'dw'), b.inflight);
  for (let r = 0; r < ROUNDS; r++) {
    out.quiet.push(await rate(quiet, incidentMix(n, `dq${r}`), b.inflight));
    out.info.push(await rate(info, incidentMix(n, `di${r}`), b.inflight));
    out.debug.push(await rate(debug, incidentMix(n, `dd${r}`), b.inflight));
    log(`debug log, round ${r + 1}: ${int(out.quiet.at(-1)!)} / ${int(out.info.at(-1)!)} / ${int(out.debug.at(-1)!)} decisions/s (no log / info / debug)`);
  }
  return out;
}

/** Bytes Redis holds for one live key (record and what it shows) and for its history, by MEMORY USAGE. */
async function redisBytes(url: string): Promise<{ bare: number; shown: number; history: number; events: number }> {
  const b = await redisBackend(url, [Number(new URL(url).port)], false);
  const store = b.store as RedisStore;
  const recorder = new HistoryRecorder({ store: store.history, limits: () => LIMITS, clock: systemClock });
  const dedup = new Deduplicator({ store, history: { recorder, replica: 'host-1:4242' } });
  const usage = async (k: string) => Number((await store.conn.send(k, ['MEMORY', 'USAGE', k, 'SAMPLES', '0'])) ?? 0);
  const keysOf = (key: string) => [store.layout.incidentRecordKey(TENANT, key), store.layout.incidentShownKey(TENANT, key)];
  const sum = async (key: string) => (await Promise.all(keysOf(key).map(usage))).reduce((a, x) => a + x, 0);
  try {
    // The same incident without what it shows, and with it: identity, a summary and three labels.
    const input = (element_id: string) => ({
      element_id,
      fault_class: 'LOS',
      root_cause_id: 'fiber-cut-12',
      severity: 'MAJOR',
      summary: 'OLT 7 lost signal on its uplink',
      labels: { team: 'access', region: 'eu-west', site: 'ber-3' },
    });
    const bareKey = 'dedup:0123456789abcdef0123456789abcdef';
    await store.incidents.decide({ tenant: TENANT, key: bareKey, fingerprint: 'MAJOR|0', ttlMs: TTL_MS, outbox: OUTBOX });
    const shown = await dedup.decideIncident(input('olt-7'));
    // Its history after a create, 40 repeats (one folded run) and a change.
    for (let i = 0; i < 40; i++) await dedup.decideIncident(input('olt-7'));
    await dedup.decideIncident({ ...input('olt-7'), severity: 'CRITICAL' });
    await recorder.flush();
    const h = store.layout.historyKey(TENANT, shown.dedup_key);
    return {
      bare: await sum(bareKey),
      shown: await sum(shown.dedup_key),
      history: await usage(h),
      events: (await store.history.read(TENANT, shown.dedup_key)).length,
    };
  } finally {
    await b.close();
  }
}

/** POST /v1/incidents answers a second from `onceonly serve` on a store, with the history off (max_events: 0) or on (the default). */
async function httpRate(dir: string, store: string, on: boolean, run: string): Promise<number> {
  const cfg = `${dir}/history-${run}.yml`;
  writeFileSync(
    cfg,
    `failopen: { journal_path: ${JSON.stringify(`${dir}/journal-${run}.db`)}, timeout_ms: 1000 }\n${on ? '' : 'history: { max_events: 0 }\n'}`,
  );
  const srv = await startListening(process.execPath, ['dist/cli/main.js', 'serve', '--port', '0', '--store', store, '--config', cfg], {}, ROOT);
  try {
    const r = wrk(srv.url, MIX, HTTP_SECONDS, [run]);
    if (r.errors > 0) throw new Error(`${r.errors} errors over HTTP (${store}, history ${on ? 'on' : 'off'})`);
    // As in-process: events the store refused would make the history look cheap.
    const metrics = await (await fetch(`${srv.url}/metrics`)).text();
    const lost = /^onceonly_history_lost_total (\S+)$/m.exec(metrics)?.[1];
    if (lost !== '0') throw new Error(`history over HTTP on ${store}: onceonly_history_lost_total is ${lost ?? 'missing'}`);
    return r.rps;
  } finally {
    await srv.stop();
  }
}

/** The same over HTTP on every store `onceonly serve` runs on, alternating rounds. */
async function httpRows(log: (s: string) => void): Promise<Row[]> {
  const dir = tempDir('onceonly-bench-history-');
  const redis = await startRedis();
  const schema = await freshSchema();
  try {
    const stores = [
      ['memory', () => 'memory:'],
      ['sqlite', (run: string) => `sqlite:${dir.path}/h-${run}.db`],
      ['redis', () => redis.url],
      ['postgres', () => `${PG_URL}?schema=${schema.schema}`],
    ] as const;
    const rows: Row[] = [];
    for (const [name, url] of stores.filter(([n]) => on(n))) {
      const row: Row = { store: name, off: [], on: [] };
      for (let r = 0; r < HTTP_ROUNDS; r++) {
        row.off.push(await httpRate(dir.path, url(`${name}off${r}`), false, `${name}off${r}`));
        row.on.push(await httpRate(dir.path, url(`${name}on${r}`), true, `${name}on${r}`));
        log(`history over HTTP on ${name}, round ${r + 1}: ${int(row.off.at(-1)!)} / ${int(row.on.at(-1)!)} requests/s (off / on)`);
      }
      rows.push(row);
    }
    return rows;
  } finally {
    await redis.stop();
    await schema.drop();
    dir.remove();
  }
}

export async function historySection(log: (s: string) => void): Promise<Section> {
  const rows: Row[] = [];
  if (on('memory')) rows.push(await measure(await memoryBackend(), N, log));
  if (on('sqlite')) rows.push(await measure(await sqliteBackend(), N, log));
  const redis = await startRedis();
  let bytes: Awaited<ReturnType<typeof redisBytes>>;
  try {
    if (on('redis')) rows.push(await measure(await redisBackend(redis.url, [redis.port], false), N, log));
    bytes = await redisBytes(redis.url);
  } finally {
    await redis.stop();
  }
  const cluster = on('redis-cluster') ? await startRedisCluster(3) : null;
  if (cluster)
    try {
      rows.push(
        await measure(
          await redisBackend(
            cluster.url,
            cluster.nodes.map((x) => x.port),
            true,
          ),
          N,
          log,
          true,
        ),
      );
    } finally {
      await cluster.stop();
    }
  if (on('postgres')) rows.push(await measure(await postgresBackend(), Math.round(N / 4), log));
  const dbg = await debugCost(N * 2, log);
  const http = await httpRows(log);
  const debugLoss = loss(best(dbg.quiet), best(dbg.debug));
  const floors = rows.filter((r) => r.floor);
  const floorNote = floors.map((r) => `${r.store} ${signed(loss(best(r.off), best(r.floor!)))}`).join(', ');
  return {
    title: "Each key's history on the decision path",
    body: [
      `The engine deciding the suite's incident mix (${int(N)} decisions a round, ${int(N / 4)} on Postgres; 50% new keys, 40% unchanged re-fires, 10% changes) with each store's own concurrency, without a history and with one (every decision recorded, a SUPPRESS run folded, written in batches; a round with history ends when its last batch is in the store). The best of ${ROUNDS} alternating rounds after one of each not counted. The floor is the same events, built, buffered and folded by the same recorder, then kept at the least any history apart from the decision's own record could cost: one write per event where a read by key finds it (a map's array on memory, an INSERT into a table with only the key's index on SQLite, an RPUSH on Redis), with no fold across batches, no bound per key and no retention.`,
      table(
        ['store', 'no history, decisions/s', 'with history', 'change', 'floor', 'floor change', 'every round (off / on / floor)'],
        rows.map((r) => [
          r.store,
          int(best(r.off)),
          int(best(r.on)),
          signed(loss(best(r.off), best(r.on))),
          r.floor ? int(best(r.floor)) : '—',
          r.floor ? signed(loss(best(r.off), best(r.floor))) : '—',
          r.off.map((x, i) => `${int(x)} / ${int(r.on[i]!)}${r.floor ? ` / ${int(r.floor[i]!)}` : ''}`).join(', '),
        ]),
      ),
      `Over HTTP: \`onceonly serve\` on each store, the history off (\`history: { max_events: 0 }\`) or on (the default), wrk \`-t1 -c64\` with the suite's incident mix for ${HTTP_SECONDS} s, the best of ${HTTP_ROUNDS} alternating rounds (each a fresh server; SQLite a fresh file).`,
      table(
        ['store', 'no history, requests/s', 'with history', 'change', 'every round (off / on)'],
        http.map((r) => [
          r.store,
          int(best(r.off)),
          int(best(r.on)),
          signed(loss(best(r.off), best(r.on))),
          r.off.map((x, i) => `${int(x)} / ${int(r.on[i]!)}`).join(', '),
        ]),
      ),
      `One debug line per decision (\`LOG_LEVEL=debug\`, pino into a stream that keeps nothing), memory store, ${int(N * 2)} decisions a round: ${int(best(dbg.quiet))} decisions/s without the observer, ${int(best(dbg.info))} with it at \`info\` (it builds nothing), ${int(best(dbg.debug))} at \`debug\` (${signed(debugLoss)}).`,
      `Redis bytes per live key (MEMORY USAGE of its record and what it shows): ${int(bytes.bare)} without identity, summary and labels, ${int(bytes.shown)} with the identity, a 31-character summary and three labels (+${int(bytes.shown - bytes.bare)}). Its history after a create, 40 repeats (folded into one event) and a change: ${bytes.events} events in ${int(bytes.history)} bytes.`,
    ],
    targets: [
      // History kept apart from the decision's record: at most 10% of requests/s over HTTP, 15% on SQLite (one file for both).
      ...http.map((r) =>
        targetAtMost(
          `requests/s over HTTP lost to keeping the history, ${r.store} (best rounds)`,
          loss(best(r.off), best(r.on)),
          r.store === 'sqlite' ? 15 : 10,
          '%',
        ),
      ),
      // In-process the goal is the floor (the least a history kept apart from the decision's record costs) plus 5 points, per store.
      ...rows
        .filter((r) => r.floor)
        .map((r) =>
          targetAtMost(
            `in-process decision throughput lost to keeping the history beyond its floor, ${r.store} (best rounds)`,
            loss(best(r.off), best(r.on)) - loss(best(r.off), best(r.floor!)),
            5,
            'points',
            `the engine alone at up to 180,000 decisions/s: each decision costs a few µs, and an event (built, buffered, written) costs about as much again; the floor loses ${floorNote || 'not measured'}`,
          ),
        ),
      targetAtMost(
        'decision throughput lost to a debug line per decision, memory store (best rounds)',
        debugLoss,
        100,
        '%',
        'debug is off by default; at info the observer builds nothing',
      ),
    ],
  };
}
