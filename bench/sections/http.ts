/**
 * Section 2: HTTP end to end. wrk drives POST /v1/incidents with the mix
 * against onceonly on each local-or-shared store, and the same against a
 * bare fastify route that parses the body and answers a constant.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { startRedis } from '../../test/helpers/redis.js';
import { tempDir } from '../../test/helpers/tmp.js';
import { startListening, wrk, type WrkResult } from '../http/wrk.js';
import { topFrames } from '../profile.js';
import { int, ratio, table, targetAtLeast, targetAtMost, x, type Section } from '../report.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const MIX = fileURLToPath(new URL('../http/mix.lua', import.meta.url));
const SECONDS = Number(process.env.HTTP_SECONDS ?? 10);
/** A fresh process's first seconds under load: its code not yet optimized, its heap still growing. */
const WARM_SECONDS = Number(process.env.HTTP_WARM_SECONDS ?? 5);
const PROFILES = fileURLToPath(new URL('../profiles/', import.meta.url));

/** Node's arguments for the bare fastify route every HTTP comparison is made against. */
export const BARE_FASTIFY = ['--import', 'tsx', 'bench/http/bare-fastify.ts'];

/**
 * onceonly serve on a store, its journal and data in `dir`, run with the
 * given Node options, or with none given CPU-profiled into bench/profiles/
 * when PROFILE=1; `moreConfig` is appended to its config file.
 */
export function serveOnceonly(store: string, dir: string, name: string, nodeOptions: string[] = [], moreConfig = '') {
  const config = `${dir}/onceonly.yml`;
  writeFileSync(config, `failopen:\n  journal_path: ${dir}/journal.db\n  timeout_ms: 1000\n${moreConfig}`);
  const profiled = process.env.PROFILE !== undefined && nodeOptions.length === 0;
  const profile = profiled ? ['--cpu-prof', `--cpu-prof-dir=${PROFILES}`, `--cpu-prof-name=${name}.cpuprofile`] : nodeOptions;
  if (profiled) mkdirSync(PROFILES, { recursive: true });
  return startListening(process.execPath, [...profile, 'dist/cli/main.js', 'serve', '--port', '0', '--store', store, '--config', config], {}, ROOT);
}

/** The stores the server sections run `onceonly serve` on: the two in-process ones and Redis. */
export const servedStores = (dir: string, redisUrl: string) =>
  [
    ['memory', 'memory:'],
    ['sqlite', `sqlite:${dir}/onceonly.db`],
    ['redis', redisUrl],
  ] as const;

/**
 * A server's first WARM_SECONDS under load, then the measured SECONDS: the
 * steady state is what the figures and targets are about, and the cold start
 * is reported beside it (the same for every server, bare fastify too).
 */
function afterWarmUp(url: string, prefix: string): { cold: WrkResult; r: WrkResult } {
  const first = wrk(url, MIX, WARM_SECONDS, [`${prefix}cold`]);
  return { cold: first, r: wrk(url, MIX, SECONDS, [prefix]) };
}

export async function httpSection(log: (s: string) => void): Promise<Section> {
  const dir = tempDir('onceonly-bench-http-');
  const redis = await startRedis();
  const results: Array<{ name: string; r: WrkResult; cold: WrkResult }> = [];
  const profiled: string[] = [];
  try {
    const bare = await startListening(process.execPath, BARE_FASTIFY, {}, ROOT);
    try {
      log(`http: bare fastify, ${WARM_SECONDS} s cold then ${SECONDS} s`);
      results.push({ name: 'bare fastify (baseline)', ...afterWarmUp(bare.url, 'bare') });
    } finally {
      await bare.stop();
    }
    for (const [name, store] of servedStores(dir.path, redis.url)) {
      const srv = await serveOnceonly(store, dir.path, `http-${name}`);
      try {
        log(`http: onceonly on ${name}, ${WARM_SECONDS} s cold then ${SECONDS} s`);
        results.push({ name: `onceonly, ${name} store`, ...afterWarmUp(srv.url, name) });
      } finally {
        await srv.stop();
      }
      if (process.env.PROFILE) profiled.push(`${PROFILES}http-${name}.cpuprofile`);
    }
  } finally {
    await redis.stop();
    dir.remove();
  }
  const base = results[0]!.r.rps;
  const served = (name: string) => results.find((r) => r.name === `onceonly, ${name} store`)!.r;
  const of = (name: string) => served(name).rps;
  const p99 = (name: string) => served(name).p99Ms;
  const errors = results.reduce((s, r) => s + r.r.errors + r.cold.errors, 0);
  return {
    title: 'HTTP end to end',
    body: [
      `\`wrk -t1 -c64 -d${SECONDS}s --latency -s bench/http/mix.lua\` (Debian's wrk: one thread, 64 connections, on the second core) against \`POST /v1/incidents\` with the same mix. The baseline is a bare fastify route on the same machine that parses the same JSON and returns a constant. Each server is fresh and first takes the same load for ${WARM_SECONDS} s, while its code is optimized and its heap grows; that run's p99 is the last column, and the others are the ${SECONDS} s that follow.`,
      table(
        ['server', 'requests/s', 'p50 ms', 'p99 ms', 'errors', 'vs bare fastify', `first ${WARM_SECONDS} s: requests/s, p99 ms`],
        results.map(({ name, r, cold }) => [
          name,
          int(r.rps),
          r.p50Ms.toFixed(2),
          r.p99Ms.toFixed(2),
          r.errors + cold.errors,
          x(ratio(r.rps, base)),
          `${int(cold.rps)}, ${cold.p99Ms.toFixed(2)}`,
        ]),
      ),
      ...(errors ? [`**${errors} requests failed**: the figures above are not clean.`] : []),
      ...profiled.flatMap((p) => [`Profile ${p.replace(ROOT, '')}, top self time:`, '```', topFrames(p, 12), '```']),
    ],
    targets: [
      targetAtLeast('HTTP on memory vs bare fastify', ratio(of('memory'), base), 0.65, HTTP_NOTE),
      targetAtLeast('HTTP on Redis vs bare fastify', ratio(of('redis'), base), 0.6, HTTP_NOTE),
      targetAtLeast('HTTP on SQLite vs bare fastify', ratio(of('sqlite'), base), 0.5, HTTP_NOTE),
      targetAtMost('p99 on memory under wrk -c64', p99('memory'), 20, 'ms', P99_NOTE),
    ],
  };
}

const HTTP_NOTE =
  "requests/s follow the server's CPU per answer: the path section's instruction counts put onceonly's HTTP layer at 1.16× bare fastify, and the decision and each key's history (the product's own work) take it to about 1.75×; the rest is the kernel's loopback write and garbage collection, whose costs grow with a slower server and a fuller heap (see \"Where the HTTP time goes\")";

const P99_NOTE =
  'the p99 is taken after each server\'s first seconds under load (the last column): in those a fresh process runs its code unoptimized and grows its heap, and onceonly, with more code on the path and state kept per key, pays that longer than bare fastify does; after them, with 64 connections always waiting, the p99 is queueing in Node\'s HTTP server and falls with the CPU per answer (see "Where the HTTP time goes")';
