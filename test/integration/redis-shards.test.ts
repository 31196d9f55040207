// needs: redis
/**
 * The shard count (`redis.shards`): a store on another count than the default
 * spreads its keys over exactly that many hash tags and decides and delivers
 * as ever; a replica configured with a count other than the one the keys were
 * written with refuses to start, since it would look for every key in the
 * wrong place and answer CREATE for live incidents.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { incidentKey } from '../../src/core/identity.js';
import { redisConnection } from '../../src/store/redis/connection.js';
import { RedisStore } from '../../src/store/redis/redis-store.js';
import { CLI, REPO_ROOT, spawnServer } from '../helpers/process.js';
import { singleAndCluster } from '../helpers/redis.js';
import { tempDir } from '../helpers/tmp.js';

const redis = singleAndCluster();

const claim = (k: number, severity = 'MAJOR') => {
  const body = { element_id: `sh-${k}`, fault_class: 'LOS', root_cause_id: 'cut-1', severity };
  const key = incidentKey(body);
  return { tenant: 'default', key, fingerprint: `${severity}|0`, ttlMs: 60_000, outbox: { severity, summary: 'los', data: body } };
};

test('5 shards on a 3-master cluster: keys land in 5 hash tags, decisions and deliveries work as on 64', async () => {
  const store = new RedisStore(redisConnection(redis.cluster.url), 'redis-cluster', { shards: 5 });
  try {
    await store.init();
    const keys = 200;
    const first = await Promise.all(Array.from({ length: keys }, (_, k) => store.incidents.decide(claim(k))));
    const again = await Promise.all(Array.from({ length: keys }, (_, k) => store.incidents.decide(claim(k, k % 2 ? 'CRITICAL' : 'MAJOR'))));
    assert.deepEqual(
      [
        first.filter((d) => d.outcome.kind === 'created').length,
        again.filter((d) => d.outcome.kind === 'changed').length,
        again.filter((d) => d.outcome.kind === 'unchanged').length,
      ],
      [keys, keys / 2, keys / 2],
    );
    const tags = new Set(
      redis.cluster.nodes
        .flatMap((n) => n.cli('--scan', '--pattern', '{oo:*').split('\n'))
        .map((k) => /^\{oo:(\d+)\}/.exec(k)?.[1])
        .filter(Boolean),
    );
    assert.deepEqual(
      [...tags].map(Number).sort((a, b) => a - b),
      [0, 1, 2, 3, 4],
      'exactly the 5 shards carry data',
    );
    assert.equal(await store.queries.countLiveIncidents(), keys);
    // The outbox of all 5 shards is fanned out and leased: one create per key and one update for half.
    await store.deliveries.fanOut(['hook'], 10_000);
    const leased = [];
    for (let round = 0; round < 50 && leased.length < keys; round++) {
      const due = await store.deliveries.leaseDue('t', 60_000, 500);
      for (const d of due) await store.deliveries.settle(d, { outcome: 'delivered' });
      leased.push(...due);
    }
    for (let round = 0; round < 50; round++) {
      const due = await store.deliveries.leaseDue('t', 60_000, 500);
      if (due.length === 0) break;
      for (const d of due) await store.deliveries.settle(d, { outcome: 'delivered' });
      leased.push(...due);
    }
    assert.equal(leased.filter((d) => d.entry.action === 'create').length, keys);
    assert.equal(leased.filter((d) => d.entry.action === 'update').length, keys / 2);
    assert.ok(leased.every((d) => Number(d.id.split(':')[0]) < 5));
  } finally {
    await store.close();
    for (const n of redis.cluster.nodes) n.cli('FLUSHALL');
  }
});

test('a store opened on a count other than the one its keys were written with refuses; the same count is accepted', async () => {
  redis.single.cli('FLUSHALL');
  const a = new RedisStore(redisConnection(redis.single.url), 'redis', { shards: 64 });
  const b = new RedisStore(redisConnection(redis.single.url), 'redis', { shards: 256 });
  const c = new RedisStore(redisConnection(redis.single.url), 'redis');
  try {
    await a.init();
    await assert.rejects(b.init(), /holds keys laid out in 64 shards .*redis\.shards: 256/);
    await c.init(); // the default is 64
    assert.equal(redis.single.cli('GET', '{oo:layout}:shards'), '64');
  } finally {
    await Promise.all([a.close(), b.close(), c.close()]);
  }
});

test('onceonly serve with redis.shards other than the stored count exits 2 naming both, and changes nothing', async () => {
  redis.single.cli('FLUSHALL');
  const dir = tempDir();
  const cfg = (shards: number) => {
    const p = join(dir.path, `s${shards}.yaml`);
    writeFileSync(p, `redis: { shards: ${shards} }\nfailopen: { journal_path: ${join(dir.path, `j${shards}.db`)} }\n`);
    return p;
  };
  const first = await spawnServer(['--port', '0', '--store', redis.single.url, '--config', cfg(16)]);
  try {
    const before = redis.single.cli('DBSIZE');
    const second = spawn(process.execPath, [CLI, 'serve', '--port', '0', '--store', redis.single.url, '--config', cfg(64)], {
      cwd: REPO_ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let err = '';
    second.stderr!.on('data', (d) => (err += d));
    const [code] = (await once(second, 'exit')) as [number];
    assert.equal(code, 2);
    assert.match(err, /^onceonly: cannot prepare the store: Redis holds keys laid out in 16 shards and this replica is configured with redis\.shards: 64/);
    assert.equal(err.trim().split('\n').length, 1, 'one line');
    assert.equal(redis.single.cli('DBSIZE'), before, 'nothing written');
    assert.equal(redis.single.cli('GET', '{oo:layout}:shards'), '16');
  } finally {
    await first.stop();
    dir.remove();
  }
});
