/**
 * Section: guard. What the layout guard (lua/lib/layout.lua, first in every
 * script so a shard-count migration can refuse callers on the old count)
 * costs the decision script: decide-incident.lua with the guard against the
 * same script without it, both by redis-benchmark on one redis-server, in
 * alternating rounds, Redis µs per call from INFO commandstats.
 * `npm run bench -- guard` prints it and writes it into docs/scaling.md.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { scripts } from '../../src/store/redis/scripts.js';
import { startRedis } from '../../test/helpers/redis.js';
import { decideBenchmarkArgs } from '../backends/redis.js';
import { table, type Section } from '../report.js';

const ROUNDS = 5;
const LISTING = readFileSync(new URL('../../src/store/redis/lua/lib/listing.lua', import.meta.url), 'utf8');
const CALLS = 200_000;

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

export async function guardSection(log: (s: string) => void): Promise<Section> {
  const guarded = scripts.decideIncident.source;
  const guard = guarded.slice(0, guarded.indexOf('local oo_checked'));
  // The baseline takes the count argument off as the guard does, and looks nothing up.
  const bare = `table.remove(ARGV)\n${guarded.slice(guarded.indexOf('\nend\n', guarded.indexOf('if refused then return refused end')) + 5)}`;
  if (!guard.includes('table.remove(ARGV)') || bare.includes('oo_refused') || !bare.includes('decide_incident(KEYS'))
    throw new Error('the decision script no longer starts with the layout guard this bench expects');
  // The same script without the per-tenant listing index (lib/listing.lua): what listing without a SCAN costs a decision.
  const unlisted = guarded.replace(LISTING, '').replace('    oo_list_touch(k[1], now)\n', '');
  if (unlisted.includes('oo_list_touch(')) throw new Error('the decision script no longer keeps the listing index this bench expects');
  const redis = await startRedis();
  const us: Record<'bare' | 'guarded' | 'unlisted', number[]> = { bare: [], guarded: [], unlisted: [] };
  try {
    for (let round = 0; round < ROUNDS; round++) {
      for (const [name, source] of [
        ['bare', bare],
        ['guarded', guarded],
        ['unlisted', unlisted],
      ] as const) {
        log(`guard: round ${round + 1} of ${ROUNDS}, ${name}`);
        const sha = createHash('sha1').update(source).digest('hex');
        redis.cli('SCRIPT', 'LOAD', source);
        redis.cli('FLUSHALL');
        redis.cli('CONFIG', 'RESETSTAT');
        execFileSync(
          'redis-benchmark',
          ['-p', String(redis.port), '-n', String(CALLS), '-c', '50', '-P', '16', '-r', '100000', 'EVALSHA', sha, ...decideBenchmarkArgs('{oo:1}')],
          { stdio: 'ignore' },
        );
        const line = redis
          .cli('INFO', 'commandstats')
          .split('\n')
          .find((l) => l.startsWith('cmdstat_evalsha'));
        us[name].push(Number(/usec_per_call=([\d.]+)/.exec(line ?? '')?.[1] ?? NaN));
      }
    }
  } finally {
    await redis.stop();
  }
  const [b, g, u] = [median(us.bare), median(us.guarded), median(us.unlisted)];
  return {
    title: 'The layout guard',
    body: [
      `Every Lua script starts with the layout guard, which takes the caller's shard count off its arguments and looks up whether the first key's shard was frozen by a shard move (one GET of a key that is almost never there). Its cost on the decision script: decide-incident.lua by redis-benchmark (${CALLS.toLocaleString('en-US')} calls, 50 connections, pipelined 16, 100,000 keys), with and without the guard, ${ROUNDS} alternating rounds, Redis µs per call from \`INFO commandstats\`, median.`,
      table(
        ['script', 'µs per call (median)', 'rounds'],
        [
          ['without the guard (baseline)', b.toFixed(2), us.bare.map((x) => x.toFixed(1)).join(' / ')],
          ['with the guard', g.toFixed(2), us.guarded.map((x) => x.toFixed(1)).join(' / ')],
          ['with ÷ without', `${(g / b).toFixed(2)}×`, ''],
        ],
      ),
      `The same decision script without the per-tenant listing index (lib/listing.lua: one ZADD of the key by its last arrival into the tenant's index of its shard, one SADD), which lets \`GET /v1/incidents\` read one tenant's keys instead of a SCAN of the keyspace. All 100,000 keys here are one tenant's in one shard, so the index is as large as it gets; spread over the shards it is smaller.`,
      table(
        ['script', 'µs per call (median)', 'rounds'],
        [
          ['without the listing index', u.toFixed(2), us.unlisted.map((x) => x.toFixed(1)).join(' / ')],
          ['with it (as shipped)', g.toFixed(2), us.guarded.map((x) => x.toFixed(1)).join(' / ')],
          ['with ÷ without', `${(g / u).toFixed(2)}×`, ''],
        ],
      ),
    ],
    targets: [],
  };
}
