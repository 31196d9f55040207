// needs: redis
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { evenSlotRanges, hashSlot, shardsPerMaster } from '../helpers/slots.js';
import { startRedisCluster, type RedisCluster } from '../helpers/redis.js';

let cluster: RedisCluster;
before(async () => {
  cluster = await startRedisCluster(3);
});
after(async () => {
  await cluster?.stop();
});

test('hashSlot agrees with the cluster’s CLUSTER KEYSLOT, for shard tags and for other keys', () => {
  const keys = [
    ...Array.from({ length: 100 }, (_, s) => `{oo:${s * 7}}:i:default:dedup:x`),
    'plain',
    '',
    '{}empty-tag',
    'a{b}c{d}',
    '{unclosed',
    'ünïcödé{ключ}',
    '{oo:layout}:shards',
  ];
  const node = cluster.nodes[0]!;
  const mismatches = keys.filter((k) => Number(node.cli('CLUSTER', 'KEYSLOT', k)) !== hashSlot(k));
  assert.deepEqual(mismatches, []);
});

test('the slot ranges match the ones redis-cli gave the 3-master cluster, and the shards per master add up', () => {
  const given = cluster.nodes
    .map((n) => n.cli('CLUSTER', 'MYID'))
    .map((id) => {
      const line = cluster.nodes[0]!.cli('CLUSTER', 'NODES')
        .split('\n')
        .find((l) => l.startsWith(id))!;
      const [lo, hi] = line.split(' ').at(-1)!.split('-').map(Number);
      return [lo!, hi!] as [number, number];
    })
    .sort((a, b) => a[0] - b[0]);
  assert.deepEqual(given, evenSlotRanges(3));
  for (const [shards, masters] of [
    [64, 3],
    [64, 16],
    [256, 64],
  ] as const) {
    const per = shardsPerMaster(shards, masters);
    assert.equal(per.length, masters);
    assert.equal(
      per.reduce((a, b) => a + b, 0),
      shards,
    );
  }
});
