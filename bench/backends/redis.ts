import { execFileSync } from 'node:child_process';
import { createClient, createCluster } from '@redis/client';
import { Redis as IORedis } from 'ioredis';
import { redisConnection } from '../../src/store/redis/connection.js';
import { keyLayout } from '../../src/store/redis/keys.js';
import { RedisStore } from '../../src/store/redis/redis-store.js';
import { scripts } from '../../src/store/redis/scripts.js';
import { decideArgs } from '../../src/store/redis/redis-incidents.js';
import { DEFAULT_SHARDS } from '../../src/config/redis.js';
import { GRACE_MS, OUTBOX, TENANT, TTL_MS, type Backend } from './backend.js';
import type { IncidentOp } from '../workload.js';

/** The default layout's keys (64 shards), as a store opened without `shards` uses them. */
const { liveIndex } = keyLayout();

/**
 * decide-incident.lua's KEYS and ARGV as redis-benchmark sends them: the
 * store's own (so the two cannot drift apart), for a key redis-benchmark
 * numbers (`__rand_int__`), every key in shard tag `tag` (`{tag}`: each
 * node's own, in cluster mode), and the shard count the layout guard takes
 * off last.
 */
export function decideBenchmarkArgs(tag: string): string[] {
  const key = 'dedup:__rand_int__';
  const { keys, args } = decideArgs(keyLayout(), { tenant: TENANT, key, fingerprint: 'MAJOR|0', ttlMs: TTL_MS, outbox: OUTBOX }, GRACE_MS);
  const { member } = liveIndex(TENANT, key);
  const inTag = (k: string) => k.replace(/^\{oo:\d+\}/, tag);
  // A live-index member per key, as the store's are (the template's would be one member for all).
  const perKey = (a: string | number) => (a === member ? 'm__rand_int__' : String(a));
  return [String(keys.length), ...keys.map(inTag), ...args.map(perKey).map((a) => (/^\{oo:\d+\}$/.test(a) ? tag : a)), String(DEFAULT_SHARDS)];
}

/**
 * redis-benchmark running the decision script by SHA with the store's own
 * arguments, pipelined (-P 16, 50 connections): what Redis itself does with
 * it, the most any client could get. Keys are drawn from n/1.6 so about half
 * the calls find their key (as the mix's re-fires do) and half create it.
 * In cluster mode redis-benchmark puts each node's own hash tag in `{tag}`.
 */
export function scriptCeiling(port: number, cluster: boolean, n: number): number {
  const tag = cluster ? '{tag}' : '{oo:1}';
  const out = execFileSync(
    'redis-benchmark',
    [
      ...(cluster ? ['--cluster'] : []),
      '-p',
      String(port),
      '-n',
      String(n),
      '-c',
      '50',
      '-P',
      '16',
      '-r',
      String(Math.round(n / 1.6)),
      '-q',
      'EVALSHA',
      scripts.decideIncident.sha,
      ...decideBenchmarkArgs(tag),
    ],
    { encoding: 'utf8' },
  );
  const m = /([\d.]+) requests per second/.exec(out.split('\r').pop() ?? '');
  if (!m) throw new Error(`redis-benchmark printed no rate: ${out.slice(-300)}`);
  return Math.round(Number(m[1]));
}

/** Loads the decision script on every node (redis-benchmark calls it by SHA only). */
function loadScript(ports: number[]) {
  for (const p of ports) execFileSync('redis-cli', ['-p', String(p), 'SCRIPT', 'LOAD', scripts.decideIncident.source]);
}

/**
 * A Redis server or cluster started by the suite. The naive algorithm runs
 * on node-redis like the store; on a single server the same Lua decision is
 * also driven by ioredis, so the client is chosen by measurement (ADR 3).
 */
export async function redisBackend(url: string, ports: number[], cluster: boolean): Promise<Backend> {
  const store = new RedisStore(redisConnection(url), cluster ? 'redis-cluster' : 'redis', { expiredGraceMs: GRACE_MS });
  const nr = cluster ? createCluster({ rootNodes: ports.map((p) => ({ url: `redis://127.0.0.1:${p}` })) }) : createClient({ url });
  await nr.connect();
  loadScript(ports);
  // The naive steps: SET NX EX; on a hit GET, EXPIRE and maybe SET. Up to four round trips, racy.
  const naive = async ({ key, fp }: IncidentOp) => {
    const k = `naive:${key}`;
    const record = JSON.stringify({ fp, ts: Date.now() / 1000 });
    if ((await nr.set(k, record, { NX: true, EX: TTL_MS / 1000 })) === 'OK') return 'CREATE';
    const stored = await nr.get(k);
    await nr.expire(k, TTL_MS / 1000);
    if (stored === null || JSON.parse(stored).fp !== fp) {
      await nr.set(k, record, { EX: TTL_MS / 1000 });
      return stored === null ? 'CREATE' : 'UPDATE';
    }
    return 'SUPPRESS';
  };
  const extra: Backend['extra'] = [];
  let io: IORedis | null = null;
  if (!cluster) {
    io = new IORedis(ports[0]!, '127.0.0.1', { lazyConnect: true });
    await io.connect();
    const layout = keyLayout();
    // Seven keys, then the arguments: the store's own, so this comparison cannot drift from it.
    io.defineCommand('decideIncident', { numberOfKeys: 7, lua: scripts.decideIncident.source });
    const call = io as unknown as { decideIncident(...a: Array<string | number>): Promise<unknown> };
    extra.push({
      label: 'same Lua decision on ioredis',
      run: ({ key, fp }) => {
        const { keys, args } = decideArgs(layout, { tenant: TENANT, key, fingerprint: fp, ttlMs: TTL_MS, outbox: OUTBOX }, GRACE_MS);
        // then the caller's shard count (the layout guard's)
        return call.decideIncident(...keys, ...args, DEFAULT_SHARDS);
      },
    });
  }
  return {
    name: cluster ? `redis cluster (${ports.length} masters)` : 'redis',
    store,
    inflight: 256,
    naive,
    ceiling: { label: `redis-benchmark${cluster ? ' --cluster' : ''}, same script by SHA, -P 16`, rate: (n) => scriptCeiling(ports[0]!, cluster, n) },
    extra,
    async close() {
      await store.close();
      await nr.close();
      await io?.quit();
    },
  };
}
