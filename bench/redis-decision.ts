/**
 * Redis decision benchmark (issue 3). One run measures, on a private
 * redis-server started here:
 *   - sequential latency of the one-round-trip Lua decision vs the seed's
 *     multi-round-trip algorithm (SET NX, then GET, EXPIRE and maybe SET);
 *   - concurrent decisions/s (256 in flight, 50% new / 40% unchanged / 10% changed)
 *     for the Lua decision on node-redis and on ioredis, and for the seed's algorithm;
 *   - redis-benchmark's ceiling for the same script by SHA and for a raw SET NX EX;
 *   - bytes per live key (MEMORY USAGE).
 * Prints a table and writes it into docs/benchmarks.md. No assertions: figures.
 *
 *   npm run bench:redis            (N=… to change the operation count)
 */
import { execFileSync } from 'node:child_process';
import os from 'node:os';
import { Redis as IORedis } from 'ioredis';
import { createClient } from '@redis/client';
import { redisConnection } from '../src/store/redis/connection.js';
import { RedisStore } from '../src/store/redis/redis-store.js';
import { deliveryKeys, failingKey, incidentRecordKey, resolutionKey, shardOf } from '../src/store/redis/keys.js';
import { scripts } from '../src/store/redis/scripts.js';
import { startRedis } from '../test/helpers/redis.js';
import { concurrent as concurrentRuns, sequential as sequentialRuns, writeSection, type Decide } from './workload.js';

const sequential = (run: Decide, prefix: string) => sequentialRuns(run, SEQ, prefix);
const concurrent = (run: Decide, prefix: string) => concurrentRuns(run, N, INFLIGHT, prefix);

const N = Number(process.env.N ?? 100_000);
const SEQ = Math.min(N, 20_000);
const INFLIGHT = 256;
const TTL = 3_600_000;
const GRACE = 600_000;

function redisBenchmark(port: number, args: string[]): number {
  const out = execFileSync('redis-benchmark', ['-p', String(port), '-n', String(N * 2), '-c', '50', '-P', '16', '-r', '1000000', '-q', ...args], {
    encoding: 'utf8',
  });
  const m = /([\d.]+) requests per second/.exec(out);
  return m ? Math.round(Number(m[1])) : NaN;
}

const redis = await startRedis();
try {
  const store = new RedisStore(redisConnection(redis.url), 'redis', { expiredGraceMs: GRACE });
  const lua = (key: string, fp: string) => store.decideIncident({ tenant: 'default', key, fingerprint: fp, ttlMs: TTL });

  // The seed's algorithm, as written there, on the same client: up to four round trips.
  const nr = createClient({ url: redis.url });
  await nr.connect();
  const seed = async (key: string, fp: string) => {
    const record = JSON.stringify({ fp, ts: Date.now() / 1000 });
    if ((await nr.set(key, record, { NX: true, EX: TTL / 1000 })) === 'OK') return 'CREATE';
    const stored = await nr.get(key);
    await nr.expire(key, TTL / 1000);
    if (stored === null) {
      await nr.set(key, record, { EX: TTL / 1000 });
      return 'CREATE';
    }
    if (JSON.parse(stored).fp === fp) return 'SUPPRESS';
    await nr.set(key, record, { EX: TTL / 1000 });
    return 'UPDATE';
  };

  // The same Lua decision driven by ioredis, to choose the client by measurement.
  const io = new IORedis(redis.port, '127.0.0.1', { lazyConnect: true, enableAutoPipelining: false });
  await io.connect();
  io.defineCommand('decideIncident', { numberOfKeys: 5, lua: scripts.decideIncident.source });
  const ioLua = (key: string, fp: string) => {
    const k = deliveryKeys(shardOf('default', key));
    return (io as unknown as { decideIncident(...a: Array<string | number>): Promise<unknown> }).decideIncident(
      incidentRecordKey('default', key), k.outbox, failingKey('incident', 'default', key), k.due, resolutionKey('default', key),
      fp, TTL, GRACE, '', 'default', key, '', '', '', k.tag, '',
    );
  };

  const seqLua = await sequential(lua, 'sl');
  const seqSeed = await sequential(seed, 'ss');
  const tLua = await concurrent(lua, 'cl');
  const tIo = await concurrent(ioLua, 'ci');
  const tSeed = await concurrent(seed, 'cs');
  redis.cli('SCRIPT', 'LOAD', scripts.decideIncident.source);
  const ceilingLua = redisBenchmark(redis.port, [
    'EVALSHA', scripts.decideIncident.sha, '5', '{oo:1}:i:default:dedup:__rand_int__', '{oo:1}:o', '{oo:1}:kf:x', '{oo:1}:q', '{oo:1}:e:x',
    'MAJOR|0', String(TTL), String(GRACE), '', 'default', 'k', '', '', '', '{oo:1}', '',
  ]);
  const ceilingSet = redisBenchmark(redis.port, ['SET', 'seed:__rand_int__', '{"fp":"MAJOR|0","ts":1}', 'NX', 'EX', '3600']);

  const sample = Array.from({ length: 1000 }, (_, i) => incidentRecordKey('default', `dedup:cl${i}`));
  const bytes = sample.reduce((s, k) => s + Number(redis.cli('MEMORY', 'USAGE', k)), 0) / sample.length;

  await Promise.all([store.close(), nr.close(), io.quit()]);

  const f = (x: number) => x.toFixed(0);
  const rows = [
    `| sequential decision, µs (p50 / p99 / p999) | ${f(seqLua.p50)} / ${f(seqLua.p99)} / ${f(seqLua.p999)} | ${f(seqSeed.p50)} / ${f(seqSeed.p99)} / ${f(seqSeed.p999)} | p99 ${(seqSeed.p99 / seqLua.p99).toFixed(2)}× lower |`,
    `| concurrent decisions/s, ${INFLIGHT} in flight, node-redis | ${tLua} | ${tSeed} | ${(tLua / tSeed).toFixed(2)}× |`,
    `| concurrent decisions/s, ${INFLIGHT} in flight, ioredis (same Lua) | ${tIo} | | node-redis ${(tLua / tIo).toFixed(2)}× ioredis |`,
    `| redis-benchmark ceiling, same script by SHA, -P 16 | ${ceilingLua} | raw SET NX EX: ${ceilingSet} | onceonly at ${(tLua / ceilingLua).toFixed(2)}× the script ceiling |`,
    `| bytes per live incident (MEMORY USAGE, mean of 1,000) | ${bytes.toFixed(1)} | | |`,
  ];
  const machine = `${os.cpus().length} × ${os.cpus()[0]?.model ?? 'cpu'}, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version}, ${redis.cli('INFO', 'server').match(/redis_version:(\S+)/)?.[1] ? 'Redis ' + redis.cli('INFO', 'server').match(/redis_version:(\S+)/)![1] : ''}`;
  const table = [
    `Measured ${new Date().toISOString().slice(0, 10)} on ${machine}; N=${N} (sequential ${SEQ}), mix 50% new / 40% unchanged / 10% changed.`,
    '',
    '| measure | onceonly (one Lua round trip) | seed algorithm (SET NX, GET, EXPIRE, SET) | ratio |',
    '| --- | --- | --- | --- |',
    ...rows,
  ].join('\n');
  console.log(table);

  if (await writeSection('redis', table)) console.log('\nwritten to docs/benchmarks.md');
} finally {
  await redis.stop();
}
