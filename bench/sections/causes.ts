/**
 * Section: where the HTTP time goes. Bare fastify and `onceonly serve` on
 * the memory, SQLite and Redis stores, each under wrk with the suite's
 * incident mix and under `--cpu-prof`: the CPU each used per answer (from
 * /proc, every thread) and its main thread's profile split into causes
 * (bench/http/causes.ts), in µs per answer, with the loop's native work
 * outside JavaScript (which V8's profiler counts idle) sampled by `perf`.
 * `npm run bench -- causes`.
 */
import { mkdirSync, readdirSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { startRedis } from '../../test/helpers/redis.js';
import { tempDir } from '../../test/helpers/tmp.js';
import { CAUSES, causesOf, cpuSeconds, type Causes, startNativeSampling, waitSeconds } from '../http/causes.js';
import { startListening, wrk, type Listening } from '../http/wrk.js';
import { int, table, type Section } from '../report.js';
import { BARE_FASTIFY, servedStores, serveOnceonly } from './http.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const MIX = fileURLToPath(new URL('../http/mix.lua', import.meta.url));
const SECONDS = Number(process.env.HTTP_SECONDS ?? 10);

interface Column {
  name: string;
  answers: number;
  /** µs of CPU per answer (/proc): every thread's, and the main thread's */
  cpuUs: number;
  mainUs: number;
  causes: Causes;
  /** share of the main thread's CPU in native event-loop work outside JS (perf), null without perf */
  native: number | null;
  /** µs per answer the main thread waited, runnable, for a core */
  waitUs: number;
}

/** Runs wrk against a server started profiled, then stops it (the profile is written at exit) and reads the profile. */
async function measure(name: string, start: (profile: string[]) => Promise<Listening>, dir: string): Promise<Column> {
  // A directory per server: a loader thread (tsx's) writes a profile of its own, and the main thread's is the largest.
  const profiles = `${dir}/${name.replace(/\W+/g, '-')}`;
  mkdirSync(profiles);
  const srv = await start(['--cpu-prof', `--cpu-prof-dir=${profiles}`]);
  let answers: number;
  let cpu: number;
  let main: number;
  let native: number | null;
  let wait: number;
  try {
    const perf = startNativeSampling(srv.pid, `${profiles}.perf`);
    const before = [cpuSeconds(srv.pid), cpuSeconds(srv.pid, true), waitSeconds(srv.pid)];
    const r = wrk(srv.url, MIX, SECONDS, [`causes${name.length}${Date.now()}`]);
    cpu = cpuSeconds(srv.pid) - before[0]!;
    main = cpuSeconds(srv.pid, true) - before[1]!;
    wait = waitSeconds(srv.pid) - before[2]!;
    native = await perf.stop();
    if (r.errors > 0) throw new Error(`${r.errors} errors over HTTP (${name})`);
    answers = r.requests;
  } finally {
    await srv.stop();
  }
  const [largest] = readdirSync(profiles)
    .map((f) => `${profiles}/${f}`)
    .sort((a, b) => statSync(b).size - statSync(a).size);
  if (!largest) throw new Error(`${name} wrote no CPU profile`);
  return { name, answers, cpuUs: (cpu * 1e6) / answers, mainUs: (main * 1e6) / answers, causes: causesOf(largest), native, waitUs: (wait * 1e6) / answers };
}

export async function causesSection(log: (s: string) => void): Promise<Section> {
  const dir = tempDir('onceonly-bench-causes-');
  const redis = await startRedis();
  const columns: Column[] = [];
  try {
    log('causes: bare fastify');
    columns.push(await measure('bare fastify', (p) => startListening(process.execPath, [...p, ...BARE_FASTIFY], {}, ROOT), dir.path));
    for (const [name, store] of servedStores(dir.path, redis.url)) {
      log(`causes: onceonly on ${name}`);
      columns.push(await measure(`onceonly ${name}`, (p) => serveOnceonly(store, dir.path, name, p), dir.path));
    }
  } finally {
    await redis.stop();
    dir.remove();
  }
  const us = (c: Column, ms: number) => ((ms * 1000) / c.answers).toFixed(1);
  /** µs per answer of native loop work outside JS (perf), or null */
  const nativeUs = (c: Column) => (c.native === null ? null : c.native * c.mainUs);
  const summed = (c: Column) => (c.causes.busyMs * 1000) / c.answers + (nativeUs(c) ?? 0);
  return {
    title: 'Where the HTTP time goes',
    body: [
      `Each server under \`wrk -t1 -c64 -d${SECONDS}s\` with the suite's incident mix and under \`node --cpu-prof\` (which itself costs a little): the CPU it used per answer, every thread, from /proc; then its main thread's profile split into causes (bench/http/causes.ts; module loading at start left out), in µs per answer. Node marks V8 idle from before the event loop's poll until after its callbacks, so the profile files the loop's native work outside JavaScript (reading sockets, the HTTP parser's C side, buffer copies) as idle; \`perf record\` on the main thread during the same load measures that share of its CPU (samples under the loop with no JavaScript and no garbage collection on the stack), shown as its own row (— when perf is not installed). The sum is set against the main thread's CPU as /proc counts it. The profile counts time between samples, so a thread pre-empted in JavaScript (another thread or redis-server took its core) is counted busy for the wait: that wait is shown below it, the most by which the sum can read high, and the sum set against the CPU plus that wait is the other bound; what the other threads used (V8's compiler and garbage collector helpers, libuv) is shown apart.`,
      table(
        ['µs per answer', ...columns.map((c) => c.name)],
        [
          ...CAUSES.map((cause) => [cause, ...columns.map((c) => us(c, c.causes.ms.get(cause)!))]),
          ["main thread, the V8 profile's sum", ...columns.map((c) => us(c, c.causes.busyMs))],
          ['Node: native event-loop work outside JS (socket reads, the HTTP parser in C), by perf', ...columns.map((c) => nativeUs(c)?.toFixed(1) ?? '—')],
          ['**main thread, the causes summed**', ...columns.map((c) => `**${summed(c).toFixed(1)}**`)],
          ['**main thread, measured (/proc)**', ...columns.map((c) => `**${c.mainUs.toFixed(1)}**`)],
          ['the causes summed against the measure', ...columns.map((c) => `${((summed(c) / c.mainUs - 1) * 100).toFixed(0)}%`)],
          ['main thread, waiting for a core while runnable (/proc schedstat; not CPU)', ...columns.map((c) => c.waitUs.toFixed(1))],
          ['the causes summed against the measure plus that wait', ...columns.map((c) => `${((summed(c) / (c.mainUs + c.waitUs) - 1) * 100).toFixed(0)}%`)],
          ['other threads (/proc: V8 helpers, libuv)', ...columns.map((c) => (c.cpuUs - c.mainUs).toFixed(1))],
          ['**CPU per answer, every thread (/proc)**', ...columns.map((c) => `**${c.cpuUs.toFixed(1)}**`)],
          ['answers', ...columns.map((c) => int(c.answers))],
        ],
      ),
    ],
    targets: [],
  };
}
