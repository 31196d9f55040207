/**
 * The soak: `npm run soak`. Runs `onceonly serve` for a long time at half the
 * rate it was measured to peak at, on SQLite and on Redis one after the
 * other, with a webhook adapter delivering every change to a local sink, and
 * records every 10 s what a slow leak would show: RSS, V8 heap, event-loop
 * delay, p99 latency, errors, the store's size, active handles (timers,
 * sockets) and the size of /metrics (a label that grows without bound).
 * Writes a table and an SVG chart per store into docs/soak.md and docs/soak/.
 *
 *   npm run soak                          30 minutes per store
 *   SOAK_MINUTES=5 npm run soak           shorter (a run under 30 minutes leaves docs/soak.md alone)
 * A run of 30 minutes or more replaces the section of each store it soaked.
 *   SOAK_STORES=redis npm run soak        one store
 *   SOAK_RATE=3000 npm run soak           a fixed rate instead of half the measured peak
 *
 * The keyspace turns over (a new generation of element ids every minute, a
 * 60 s TTL), so the live set, the seen-markers and the windows reach a
 * steady size: what keeps growing after the warm-up is a leak.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import { startRedis, type RedisServer } from '../test/helpers/redis.js';
import { tempDir } from '../test/helpers/tmp.js';
import { startListening, wrkAsync, type Listening } from './http/wrk.js';
import { table } from './report.js';
import { svgChart } from './soak/plot.js';
import { drained, metricSum, metricValue, startCountingSink } from './http/sink.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const SCRIPT = fileURLToPath(new URL('./soak/soak.lua', import.meta.url));
const MIX = fileURLToPath(new URL('./http/mix.lua', import.meta.url));
const MINUTES = Number(process.env.SOAK_MINUTES ?? 30);
const STORES = (process.env.SOAK_STORES ?? 'sqlite,redis').split(',').map((s) => s.trim());
const SAMPLE_S = 10;
const CONNECTIONS = 64;
/** The first fifth of the run (at least 2 minutes) is warm-up: caches, JIT, the live set filling. */
const WARMUP_MIN = Math.max(2, MINUTES / 5);
for (const s of STORES) if (s !== 'sqlite' && s !== 'redis') throw new Error(`unknown store ${s}: choose sqlite, redis`);
if (!(MINUTES > 0)) throw new Error('SOAK_MINUTES must be a positive number');

const started = Date.now();
const log = (s: string) => console.error(`[soak ${((Date.now() - started) / 1000).toFixed(0).padStart(5)} s] ${s}`);

interface Sample {
  minute: number;
  rps: number;
  p99Ms: number;
  errors: number;
  /** of the errors, answers that were not 2xx (the rest: sockets, mostly requests past wrk's 2 s timeout) */
  non2xx: number;
  rssMb: number;
  heapMb: number;
  loopP99Ms: number;
  storeMb: number;
  storeKeys: number;
  handles: number;
  metricsKb: number;
  delivered: number;
  /** deliveries waiting (the outbox's backlog) */
  pending: number;
  lagS: number;
}

async function storeSize(store: string, dir: string, redis: RedisServer | null): Promise<{ mb: number; keys: number }> {
  if (redis) {
    const mem = Number(/used_memory:(\d+)/.exec(redis.cli('INFO', 'memory'))?.[1] ?? NaN);
    return { mb: mem / 2 ** 20, keys: Number(redis.cli('DBSIZE')) };
  }
  const file = store.slice('sqlite:'.length);
  const size = (p: string) => {
    try {
      return statSync(p).size;
    } catch {
      return 0;
    }
  };
  return { mb: (size(file) + size(`${file}-wal`) + size(`${dir}/journal.db`)) / 2 ** 20, keys: NaN };
}

async function soakOne(name: 'sqlite' | 'redis') {
  const dir = tempDir(`onceonly-soak-${name}-`);
  const redis = name === 'redis' ? await startRedis() : null;
  const sink = await startCountingSink();
  const store = redis ? redis.url : `sqlite:${dir.path}/onceonly.db`;
  const config = `${dir.path}/soak.yml`;
  writeFileSync(
    config,
    [
      'incidents: { ttl_seconds: 60, expired_grace_seconds: 30 }',
      'events: { retention_seconds: 120, stale_after_seconds: 60 }',
      'violations: { window_seconds: 60 }',
      `failopen: { journal_path: ${dir.path}/journal.db, timeout_ms: 1000 }`,
      `adapters: [{ name: sink, type: webhook, url: "${sink.url}" }]`,
      '',
    ].join('\n'),
  );
  let srv: Listening | null = null;
  const samples: Sample[] = [];
  try {
    srv = await startListening(process.execPath, ['dist/cli/main.js', 'serve', '--port', '0', '--store', store, '--config', config], {}, ROOT);
    // The peak, end to end: the suite's HTTP load (64 connections, no pause) for 10 s, then until
    // every delivery it caused has reached the sink. Under full load the decisions win the CPU and the
    // worker falls behind, so the rate of answers alone would overstate what the service sustains.
    await wrkAsync(srv.url, MIX, 5, [`warm-${name}`]); // JIT and caches first: a cold server's peak is not its peak
    await drained(srv.url);
    const burst = await wrkAsync(srv.url, MIX, 10, [`peak-${name}`]);
    const drainStart = Date.now();
    await drained(srv.url);
    const drainS = (Date.now() - drainStart) / 1000;
    const peak = burst.requests / (10 + drainS);
    const target = Number(process.env.SOAK_RATE ?? peak / 2);
    log(
      `${name}: answers peak at ${Math.round(burst.rps)}/s, their deliveries drained ${drainS.toFixed(1)} s later: ${Math.round(peak)}/s end to end; soaking at ${Math.round(target)}/s for ${MINUTES} min`,
    );
    // Each connection pauses between requests; the pause is tuned every sample to hold the rate.
    let pauseMs = Math.max(0, (CONNECTIONS * 1000) / target - 1);
    const t0 = Date.now();
    while (Date.now() - t0 < MINUTES * 60_000) {
      const r = await wrkAsync(srv.url, SCRIPT, SAMPLE_S, [pauseMs.toFixed(0), '20000', '60'], { connections: CONNECTIONS });
      // rate ≈ connections · 1000 / (pause + latency): solve for the pause that gives the target.
      if (r.rps > 0) pauseMs = Math.max(0, pauseMs + CONNECTIONS * 1000 * (1 / target - 1 / r.rps));
      const text = await (await fetch(`${srv.url}/metrics`)).text();
      const size = await storeSize(store, dir.path, redis);
      const s: Sample = {
        minute: (Date.now() - t0) / 60_000,
        rps: r.rps,
        p99Ms: r.p99Ms,
        errors: r.errors,
        non2xx: r.non2xx,
        rssMb: metricValue(text, 'onceonly_process_resident_memory_bytes') / 2 ** 20,
        heapMb: metricValue(text, 'onceonly_nodejs_heap_size_used_bytes') / 2 ** 20,
        loopP99Ms: metricValue(text, 'onceonly_nodejs_eventloop_lag_p99_seconds') * 1000,
        storeMb: size.mb,
        storeKeys: size.keys,
        handles: metricSum(text, 'onceonly_nodejs_active_handles'),
        metricsKb: text.length / 1024,
        delivered: sink.count(),
        pending: metricValue(text, 'onceonly_deliveries_pending'),
        lagS: metricValue(text, 'onceonly_outbox_lag_seconds'),
      };
      samples.push(s);
      if (samples.length % 6 === 0 || process.env.SOAK_VERBOSE) {
        log(
          `${name} ${s.minute.toFixed(1)} min: ${Math.round(s.rps)}/s p99 ${s.p99Ms.toFixed(1)} ms, rss ${s.rssMb.toFixed(0)} MB, heap ${s.heapMb.toFixed(0)} MB, store ${s.storeMb.toFixed(1)} MB, pending ${s.pending} (lag ${s.lagS} s), delivered ${s.delivered}, errors ${s.errors}`,
        );
      }
    }
    return { name, peak, answersPeak: burst.rps, drainS, target, samples };
  } finally {
    await srv?.stop();
    await sink.close();
    await redis?.stop();
    dir.remove();
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;
const floor = (xs: number[]) => Math.min(...xs);

/**
 * Growth after the warm-up: the last tenth of the samples against the first
 * tenth after warm-up, each tenth summed up by `of` (the median by default;
 * for the heap its floor, what is left after a collection, which a leak
 * raises and the collector's sawtooth does not).
 */
function drift(samples: Sample[], pick: (s: Sample) => number, of: (xs: number[]) => number = median) {
  const after = samples.filter((s) => s.minute >= WARMUP_MIN).map(pick);
  const tenth = Math.max(1, Math.floor(after.length / 10));
  const first = of(after.slice(0, tenth));
  const last = of(after.slice(-tenth));
  return { first, last, change: first > 0 ? (last - first) / first : NaN };
}

const pctText = (c: number) => (Number.isFinite(c) ? `${c >= 0 ? '+' : ''}${(c * 100).toFixed(1)}%` : 'n/a');

function report(run: Awaited<ReturnType<typeof soakOne>>) {
  const { name, samples } = run;
  const rss = drift(samples, (s) => s.rssMb);
  const heap = drift(samples, (s) => s.heapMb, floor);
  const p99 = drift(samples, (s) => s.p99Ms);
  const store = drift(samples, (s) => s.storeMb);
  const handles = drift(samples, (s) => s.handles);
  const metrics = drift(samples, (s) => s.metricsKb);
  const errors = samples.reduce((a, s) => a + s.errors, 0);
  const non2xx = samples.reduce((a, s) => a + s.non2xx, 0);
  const sent = samples.reduce((a, s) => a + s.rps * SAMPLE_S, 0);
  const flat = Math.abs(rss.change) <= 0.1 && Math.abs(heap.change) <= 0.1;
  const svg = svgChart(
    `onceonly serve on ${name}: ${Math.round(run.target)} requests/s for ${MINUTES} min`,
    samples.map((s) => s.minute),
    [
      { name: 'RSS', unit: 'MB', values: samples.map((s) => s.rssMb), color: '#d62728' },
      { name: 'heap used', unit: 'MB', values: samples.map((s) => s.heapMb), color: '#1f77b4' },
      { name: 'p99', unit: 'ms', values: samples.map((s) => s.p99Ms), color: '#2ca02c' },
      { name: 'event-loop p99', unit: 'ms', values: samples.map((s) => s.loopP99Ms), color: '#9467bd' },
      { name: 'store', unit: 'MB', values: samples.map((s) => s.storeMb), color: '#8c564b' },
      { name: 'requests/s', unit: '/s', values: samples.map((s) => s.rps), color: '#7f7f7f' },
    ],
    WARMUP_MIN,
  );
  const every = Math.max(1, Math.round(samples.length / 30));
  const rows = samples
    .filter((_, i) => i % every === 0 || i === samples.length - 1)
    .map((s) => [
      s.minute.toFixed(1),
      Math.round(s.rps).toLocaleString('en-US'),
      s.p99Ms.toFixed(1),
      s.loopP99Ms.toFixed(1),
      s.rssMb.toFixed(0),
      s.heapMb.toFixed(0),
      s.storeMb.toFixed(1),
      Number.isFinite(s.storeKeys) ? s.storeKeys.toLocaleString('en-US') : '—',
      s.handles,
      s.metricsKb.toFixed(0),
      s.errors,
    ]);
  const verdict = [
    table(
      ['after warm-up (first tenth → last tenth)', 'from', 'to', 'change', 'goal'],
      [
        ['RSS, MB (median)', rss.first.toFixed(0), rss.last.toFixed(0), pctText(rss.change), '±10%'],
        ['heap used, MB (floor: after collection)', heap.first.toFixed(0), heap.last.toFixed(0), pctText(heap.change), '±10%'],
        ['p99, ms (median)', p99.first.toFixed(1), p99.last.toFixed(1), pctText(p99.change), 'stable'],
        ['store size, MB', store.first.toFixed(1), store.last.toFixed(1), pctText(store.change), 'steady (the keyspace turns over)'],
        ['active handles', handles.first.toFixed(0), handles.last.toFixed(0), pctText(handles.change), 'steady'],
        ['/metrics, KiB', metrics.first.toFixed(0), metrics.last.toFixed(0), pctText(metrics.change), 'steady (no unbounded label)'],
      ],
    ),
    `${Math.round(sent).toLocaleString('en-US')} requests, **${errors} errors** (${non2xx} answers not 2xx, ${errors - non2xx} requests unanswered within 2 s); ${samples.at(-1)?.delivered.toLocaleString('en-US')} webhook deliveries. Memory ${flat ? '**flat** within 10%' : '**not flat**: see the table'}.`,
  ];
  return {
    name,
    svg,
    flat,
    errors,
    body: [
      `Peak measured at the start: answers at ${Math.round(run.answersPeak).toLocaleString('en-US')} requests/s (wrk, 64 connections, 10 s), their deliveries done ${run.drainS.toFixed(1)} s after the burst: ${Math.round(run.peak).toLocaleString('en-US')} requests/s end to end; soaked at ${Math.round(run.target).toLocaleString('en-US')}/s with ${CONNECTIONS} connections.`,
      `![${name} soak](soak/${name}.svg)`,
      ...verdict,
      table(['min', 'req/s', 'p99 ms', 'loop p99 ms', 'RSS MB', 'heap MB', 'store MB', 'store keys', 'handles', '/metrics KiB', 'errors'], rows),
    ],
  };
}

execFileSync(process.execPath, ['scripts/test-prereqs.mjs', 'redis', 'wrk'], { cwd: ROOT, stdio: 'inherit' });
const runs = [];
for (const s of STORES) runs.push(report(await soakOne(s as 'sqlite' | 'redis')));
const header = (name: string) =>
  `Measured ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC by \`SOAK_STORES=${name} npm run soak\` (${MINUTES} min) on ${os.cpus().length} × ${os.cpus()[0]?.model.trim()}, ${Math.round(os.totalmem() / 2 ** 30)} GiB; Node ${process.version}.`;
console.log(runs.map((r) => [header(r.name), ...r.body].join('\n\n')).join('\n\n'));
if (MINUTES >= 30 && !process.env.SOAK_RATE) {
  // Each store's section is replaced on its own, so a store can be soaked again without the other.
  const doc = `${ROOT}docs/soak.md`;
  mkdirSync(`${ROOT}docs/soak`, { recursive: true });
  let page = readFileSync(doc, 'utf8');
  for (const r of runs) {
    writeFileSync(`${ROOT}docs/soak/${r.name}.svg`, r.svg);
    const begin = `<!-- soak:${r.name} begin -->`;
    const end = `<!-- soak:${r.name} end -->`;
    page = `${page.slice(0, page.indexOf(begin) + begin.length)}\n${[header(r.name), ...r.body].join('\n\n')}\n${page.slice(page.indexOf(end))}`;
  }
  writeFileSync(doc, page);
  log(`wrote docs/soak.md and docs/soak/*.svg`);
} else {
  const out = `${ROOT}bench/soak/last`;
  mkdirSync(out, { recursive: true });
  for (const r of runs) writeFileSync(`${out}/${r.name}.svg`, r.svg);
  log(`a run shorter than 30 minutes or at a fixed rate: docs/soak.md left alone; charts in bench/soak/last/`);
}
process.exitCode = runs.every((r) => r.errors === 0) ? 0 : 1;
