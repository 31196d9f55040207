// needs: redis
/**
 * Moving a live Redis to more shards (`onceonly migrate-shards`): replicas
 * keep deciding while the keys move, a replica on the old count moves on its
 * own when it meets a frozen shard, a replica started on the new count adopts
 * records it meets first, and no fault is created twice.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { incidentKey } from '../../src/core/identity.js';
import type { Delivery, IncidentClaim } from '../../src/store/contract/index.js';
import { redisConnection } from '../../src/store/redis/connection.js';
import { keyLayout, LAYOUT_KEY, MIGRATING_KEY, movedKey } from '../../src/store/redis/keys.js';
import { RedisStore } from '../../src/store/redis/redis-store.js';
import { migrateShards } from '../../src/store/redis/reshard.js';
import { scripts } from '../../src/store/redis/scripts.js';
import { CLI, REPO_ROOT, spawnServer } from '../helpers/process.js';
import { tempDir } from '../helpers/tmp.js';
import { type RedisServer, singleAndCluster } from '../helpers/redis.js';

const redis = singleAndCluster();

const claim = (k: number, severity = 'MAJOR'): IncidentClaim => {
  const body = { element_id: `mv-${k}`, fault_class: 'LOS', root_cause_id: 'cut-1', severity };
  return { tenant: 'default', key: incidentKey(body), fingerprint: `${severity}|0`, ttlMs: 600_000, outbox: { severity, summary: 'los', data: body } };
};
const store = (url: string, shards: number, kind: 'redis' | 'redis-cluster' = 'redis') => new RedisStore(redisConnection(url), kind, { shards });
/** Every incident record key in Redis, by shard tag. */
const recordTags = (nodes: RedisServer[]) =>
  nodes
    .flatMap((n) => n.cli('--scan', '--pattern', '{oo:*}:i:*').split('\n'))
    .filter(Boolean)
    .map((k) => Number(/^\{oo:(\d+)\}/.exec(k)![1]));

/**
 * Fans out and leases everything the stores' outboxes hold, settling each as delivered, until nothing is
 * pending: a delivery held to keep its key's order (during a move) comes back a second later.
 */
async function drain(s: RedisStore): Promise<Delivery[]> {
  const out: Delivery[] = [];
  for (const until = Date.now() + 120_000; Date.now() < until; ) {
    await s.deliveries.fanOut(['hook'], 10_000);
    const due = await s.deliveries.leaseDue('t', 60_000, 1000);
    for (const d of due) await s.deliveries.settle(d, { outcome: 'delivered' });
    out.push(...due);
    if (due.length > 0) continue;
    const b = await s.deliveries.backlog();
    if (b.pending === 0 && b.oldestAt === null) return out;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`still pending after 120 s: ${JSON.stringify(await s.deliveries.backlog())}`);
}

test('a replica on the old count meets a frozen shard and moves on its own; one on the new count adopts what it meets; each record once', async () => {
  redis.single.cli('FLUSHALL');
  const old = store(redis.single.url, 4);
  const fresh = store(redis.single.url, 7);
  const tool = redisConnection(redis.single.url);
  try {
    await old.init();
    const keys = 100;
    const first = await Promise.all(Array.from({ length: keys }, (_, k) => old.incidents.decide(claim(k))));
    assert.equal(first.filter((d) => d.outcome.kind === 'created').length, keys);
    // The migration's first step only: the count recorded, nothing frozen or copied yet.
    await tool.evalScript(scripts.layoutMove, [LAYOUT_KEY, MIGRATING_KEY], [7, 7]);
    assert.deepEqual([redis.single.cli('GET', LAYOUT_KEY), redis.single.cli('GET', MIGRATING_KEY)], ['7', '4']);
    await fresh.init();
    assert.equal(fresh.layout.previous?.shards, 4, 'a replica started on 7 learns the count the keys move from');
    // The new replica meets keys the old layout holds: it freezes their shards and adopts them.
    const seen = await Promise.all(Array.from({ length: 10 }, (_, k) => fresh.incidents.decide(claim(k, 'CRITICAL'))));
    assert.deepEqual(
      seen.map((d) => d.outcome.kind),
      Array(10).fill('changed'),
      'the adopted records are live: a change, not a CREATE',
    );
    // The old replica is refused in the frozen shards, moves to 7 and decides there, on the same records.
    const again = await Promise.all(Array.from({ length: keys }, (_, k) => old.incidents.decide(claim(k, 'CRITICAL'))));
    assert.equal(old.layout.shards, 7, 'the old replica moved to the new count');
    assert.equal(again.filter((d) => d.outcome.kind === 'created').length, 0, 'no record created twice');
    assert.deepEqual(
      [again.slice(0, 10).every((d) => d.outcome.kind === 'unchanged'), again.slice(10).every((d) => d.outcome.kind === 'changed')],
      [true, true],
      'the first ten were changed by the new replica already',
    );
    // The tool resumes the migration and ends it: every record in its new shard, no old copy left.
    const m = await migrateShards(tool, 7);
    assert.equal(m.state, 'resumed');
    assert.equal(m.records.incident, keys);
    assert.equal(redis.single.cli('EXISTS', MIGRATING_KEY), '0');
    const placed = await Promise.all(Array.from({ length: keys }, (_, k) => fresh.incidents.get('default', claim(k).key)));
    assert.ok(placed.every((r) => r?.updates === 1));
    const want = Array.from({ length: keys }, (_, k) => fresh.layout.shardOf('default', claim(k).key)).sort((a, b) => a - b);
    assert.deepEqual(
      recordTags([redis.single]).sort((a, b) => a - b),
      want,
      'each record once, in its shard of 7',
    );
    assert.equal(await fresh.queries.countLiveIncidents(), keys, 'counted once each');
    // Deliveries: one create per key (made on 4 shards, drained where they were) and one update per key.
    const sent = await drain(fresh);
    const per = new Map<string, string[]>();
    for (const d of sent) per.set(d.entry.key, [...(per.get(d.entry.key) ?? []), `${d.entry.action}:${d.n}`]);
    assert.equal(per.size, keys);
    for (const [key, calls] of per) {
      assert.equal(calls.filter((c) => c.startsWith('create')).length, 1, `${key}: ${calls}`);
      assert.equal(calls.filter((c) => c.startsWith('update')).length, 1, `${key}: ${calls}`);
    }
  } finally {
    await Promise.all([old.close(), fresh.close(), tool.close()]);
  }
});

// Planted fault it catches: a member's group or a kept answer written with a raw command, past the layout guard.
test("the writes once made by raw commands (a member's group, a kept answer) are refused on a frozen shard and made on the new count", async () => {
  redis.single.cli('FLUSHALL');
  const [a, b] = [store(redis.single.url, 4), store(redis.single.url, 4)];
  const fresh = store(redis.single.url, 7);
  const tool = redisConnection(redis.single.url);
  const [four, seven] = [keyLayout(4), keyLayout(7)];
  try {
    await a.init();
    await b.init();
    assert.equal((await b.requests.begin('default', 'idem-1', 'h1', 60_000, 100)).state, 'new');
    // The migration's first steps: the new count recorded, every old shard frozen.
    await tool.evalScript(scripts.layoutMove, [LAYOUT_KEY, MIGRATING_KEY], [7, 7]);
    for (let shard = 0; shard < 4; shard++) redis.single.cli('SET', movedKey(shard, 4), '7');
    await a.groups.remember('default', 'dedup:m1', 'group:g1');
    assert.equal(a.layout.shards, 7, 'the replica on 4 was refused and moved');
    assert.equal(redis.single.cli('EXISTS', four.groupKeys.member('default', 'dedup:m1')), '0', 'nothing written where the others no longer look');
    assert.equal(redis.single.cli('GET', seven.groupKeys.member('default', 'dedup:m1')), 'group:g1');
    const answer = { status: 200, contentType: 'application/json', body: '{"ok":true}' };
    await b.requests.finish('default', 'idem-1', 'h1', { whole: answer, digest: answer }, 60_000, 1_000_000);
    assert.equal(b.layout.shards, 7, 'the other replica on 4 was refused and moved');
    const replay = await fresh.requests.begin('default', 'idem-1', 'h1', 60_000, 100);
    assert.deepEqual(replay, { state: 'done', bodyHash: 'h1', answer }, 'the answer is kept in the new layout');
  } finally {
    await Promise.all([a.close(), b.close(), fresh.close(), tool.close()]);
  }
});

// Planted fault it catches: a ticket's longer life set with a raw GETEX, or a raw write let through the seam.
test("a ticket's longer life is a guarded write too, and the seam refuses any raw write before Redis sees it", async () => {
  redis.single.cli('FLUSHALL');
  const a = store(redis.single.url, 4);
  const tool = redisConnection(redis.single.url);
  const owner = { adapter: 'snow', tenant: 'default', kind: 'incident' as const, key: 'dedup:t1' };
  const seven = keyLayout(7);
  try {
    await a.init();
    assert.equal(await a.tickets.claim(owner, 'INC001', 60_000), 'INC001');
    await tool.evalScript(scripts.layoutMove, [LAYOUT_KEY, MIGRATING_KEY], [7, 7]);
    for (let shard = 0; shard < 4; shard++) redis.single.cli('SET', movedKey(shard, 4), '7');
    assert.equal(await a.tickets.find(owner, 3_600_000), 'INC001');
    assert.equal(a.layout.shards, 7, 'the replica on 4 was refused and moved');
    const kept = seven.ticketKey(owner.adapter, owner.tenant, owner.kind, owner.key);
    assert.ok(Number(redis.single.cli('PTTL', kept)) > 60_000, 'the longer life was set where the new count keeps the ticket');
    for (const command of [
      ['SET', kept, 'INC999'],
      ['getex', kept, 'PX', '1'],
      ['DEL', kept],
    ]) {
      await assert.rejects(a.seam.conn.send(kept, command), (err: Error & { code?: string }) => err.code === 'unguarded_write', command.join(' '));
    }
    assert.equal(redis.single.cli('GET', kept), 'INC001', 'nothing written');
    assert.ok(Number(redis.single.cli('PTTL', kept)) > 60_000, 'nor its life changed');
  } finally {
    await Promise.all([a.close(), tool.close()]);
  }
});

/**
 * Two history batches of two keys in two shards of 4, the second batch sent once the count moved to 7 and only
 * the second key's shard is frozen: `freeze` sets that shard's marker on the server the test runs against.
 * Answers each key's event times as read back; `first` looks before and after the first batch.
 */
async function historyAcrossAMove(
  s: RedisStore,
  url: string,
  freeze: (marker: string) => void,
  first: { before(): void; after(): void } = { before() {}, after() {} },
): Promise<Array<{ key: string; at: number[] }>> {
  const four = keyLayout(4);
  const shardOf = (key: string) => Number(/^\{oo:(\d+)\}/.exec(four.historyKey('default', key))![1]);
  const keys = Array.from({ length: 40 }, (_, i) => `dedup:hist-${i}`);
  const open = keys[0]!;
  const frozen = keys.find((k) => shardOf(k) !== shardOf(open))!;
  const limits = { maxEvents: 10, keepMs: 600_000 };
  const event = (key: string, at: number) => ({ tenant: 'default', key, event: { at, type: 'closed', updates: 0 } });
  const tool = redisConnection(url);
  try {
    await s.init();
    first.before();
    await s.history.append([event(open, 1000), event(frozen, 1000)], limits);
    first.after();
    await tool.evalScript(scripts.layoutMove, [LAYOUT_KEY, MIGRATING_KEY], [7, 7]);
    freeze(movedKey(shardOf(frozen), 4));
    await s.history.append([event(open, 2000), event(frozen, 2000)], limits);
    assert.equal(s.layout.shards, 7, 'the replica on 4 was refused and moved');
    return await Promise.all([open, frozen].map(async (key) => ({ key, at: (await s.history.read('default', key)).map((e) => e.at) })));
  } finally {
    await tool.close();
  }
}

// Planted fault it catches: a batch of histories written shard by shard in one call, guarded by its first key only.
test('one call writes a batch of histories across shards; a frozen shard refuses it whole, and it is written on the new count', async () => {
  redis.single.cli('FLUSHALL');
  const a = store(redis.single.url, 4);
  try {
    const read = await historyAcrossAMove(a, redis.single.url, (marker) => redis.single.cli('SET', marker, '7'), {
      before: () => redis.single.cli('CONFIG', 'RESETSTAT'),
      after: () => assert.equal(redis.single.cli('INFO', 'commandstats').match(/cmdstat_evalsha:calls=(\d+)/)?.[1], '1', 'one script call for both shards'),
    });
    for (const { key, at } of read) {
      assert.deepEqual(at, [1000, 2000], `${key}: its first event adopted from the old count, its second written once on the new`);
      assert.equal(redis.single.cli('LLEN', keyLayout(7).historyKey('default', key)), '2');
    }
  } finally {
    await a.close();
  }
});

// Planted fault it catches: a batch's parts made again together when a move refuses one of them (the others twice).
test('on a cluster a history batch goes shard by shard; a part a frozen shard refuses is made again alone, each event once', async () => {
  for (const n of redis.cluster.nodes) n.cli('FLUSHALL');
  const a = store(redis.cluster.url, 4, 'redis-cluster');
  try {
    // -c follows the cluster's redirect to the node that holds the shard's marker.
    const read = await historyAcrossAMove(a, redis.cluster.url, (marker) => redis.cluster.nodes[0]!.cli('-c', 'SET', marker, '7'));
    for (const { key, at } of read) assert.deepEqual(at, [1000, 2000], `${key}: each event once, the open shard's part not made again`);
  } finally {
    await a.close();
  }
});

test('a record adopted and then closed in the new layout is never adopted again from its old copy', async () => {
  redis.single.cli('FLUSHALL');
  const old = store(redis.single.url, 4);
  const tool = redisConnection(redis.single.url);
  const a = store(redis.single.url, 9);
  const b = store(redis.single.url, 9);
  try {
    await old.init();
    const moving = Array.from({ length: 40 }, (_, k) => k).filter(
      (k) => old.layout.shardOf('default', claim(k).key) !== a.layout.shardOf('default', claim(k).key),
    );
    await Promise.all(moving.map((k) => old.incidents.decide(claim(k))));
    await tool.evalScript(scripts.layoutMove, [LAYOUT_KEY, MIGRATING_KEY], [9, 9]);
    await Promise.all([a.init(), b.init()]);
    // A slow adopter reads the first key's old copy now, and writes only after a adopted and closed it.
    const k0 = claim(moving[0]!).key;
    const oldRecord = old.layout.incidentRecordKey('default', k0);
    const newRecord = a.layout.incidentRecordKey('default', k0);
    const stale = (await tool.evalScript(scripts.adoptRead, [oldRecord], [4, 9, 'd', 9])) as string[];
    assert.equal(stale[0], 'string', 'the slow adopter read the old copy');
    // a adopts and closes; the old copies are still there (migrate-shards has not run).
    const closed = await Promise.all(moving.map((k) => a.incidents.close('default', claim(k).key)));
    assert.ok(
      closed.every((r) => r !== null),
      'the adopted records closed',
    );
    assert.equal(recordTags([redis.single]).length, moving.length, 'only the old copies are left');
    const late = await tool.evalScript(scripts.adoptWrite, [`{oo:${a.layout.shardOf('default', k0)}}:lv`, newRecord], ['', 60_000, '', ...stale, 9]);
    assert.equal(Number(late), 0, 'the slow adopter restores nothing: the key was adopted before');
    assert.equal(redis.single.cli('EXISTS', newRecord), '0');
    // b, which never met these keys, decides them: each is a new fault, not the stale copy brought back.
    const next = await Promise.all(moving.map((k) => b.incidents.decide(claim(k))));
    assert.deepEqual(new Set(next.map((d) => d.outcome.kind)), new Set(['created']));
  } finally {
    await Promise.all([old.close(), a.close(), b.close(), tool.close()]);
  }
});

test("a moved key's new deliveries wait for the ones still pending in its old shard: a close never overtakes its create", async () => {
  redis.single.cli('FLUSHALL');
  const old = store(redis.single.url, 4);
  const tool = redisConnection(redis.single.url);
  const fresh = store(redis.single.url, 9);
  try {
    await old.init();
    const k = Array.from({ length: 40 }, (_, i) => i).find(
      (i) => old.layout.shardOf('default', claim(i).key) !== fresh.layout.shardOf('default', claim(i).key),
    )!;
    const key = claim(k).key;
    assert.equal((await old.incidents.decide(claim(k))).outcome.kind, 'created');
    // Its create is fanned out in the old shard and not yet delivered (its receiver is failing, say).
    await old.deliveries.fanOut(['hook'], 100);
    await tool.evalScript(scripts.layoutMove, [LAYOUT_KEY, MIGRATING_KEY], [9, 9]);
    await fresh.init();
    assert.ok(await fresh.incidents.close('default', key), 'closed on 9 shards');
    await fresh.deliveries.fanOut(['hook'], 100);
    const first = await fresh.deliveries.leaseDue('t', 60_000, 100);
    assert.deepEqual(
      first.map((d) => d.entry.action),
      ['create'],
      'the close waits while the create is pending in the old shard',
    );
    assert.equal((await fresh.deliveries.backlog()).held, 1, 'the close is held');
    assert.equal(await fresh.deliveries.settle(first[0]!, { outcome: 'delivered' }), true);
    // Looked at again a second later (on Redis's clock), the close goes.
    await new Promise((r) => setTimeout(r, 1100));
    const next = await fresh.deliveries.leaseDue('t', 60_000, 100);
    assert.deepEqual(
      next.map((d) => `${d.entry.action}:${d.entry.key === key}`),
      ['close:true'],
    );
  } finally {
    await Promise.all([old.close(), fresh.close(), tool.close()]);
  }
});

test('under load on a 3-master cluster: two replicas decide while the keys move from 4 to 11 shards; every fault created once, no Idempotency-Key shared', async () => {
  for (const n of redis.cluster.nodes) n.cli('FLUSHALL');
  const replicas = [store(redis.cluster.url, 4, 'redis-cluster'), store(redis.cluster.url, 4, 'redis-cluster')];
  const tool = redisConnection(redis.cluster.url);
  const late = store(redis.cluster.url, 11, 'redis-cluster');
  try {
    for (const r of replicas) await r.init();
    const keys = 2000;
    const created = new Map<number, number>();
    const outcomes: Record<string, number> = {};
    let stop = false;
    let rounds = 0;
    // 32 clients, each through every key from its own starting point, to both replicas in turn, severities
    // alternating (so updates happen), until the move is over and each has been through every key.
    const client = async (c: number) => {
      for (let i = 0; !stop || i < keys; i++) {
        const k = (c * 61 + i) % keys;
        const d = await replicas[i % 2]!.incidents.decide(claim(k, Math.floor(i / 300) % 2 ? 'CRITICAL' : 'MAJOR'));
        outcomes[d.outcome.kind] = (outcomes[d.outcome.kind] ?? 0) + 1;
        if (d.outcome.kind === 'created') created.set(k, (created.get(k) ?? 0) + 1);
        rounds++;
      }
    };
    let failed: unknown = null;
    const clients = Array.from({ length: 32 }, (_, c) =>
      client(c).catch((err: unknown) => {
        failed ??= err;
        stop = true;
      }),
    );
    while (rounds < keys * 2 && failed === null) await new Promise((r) => setTimeout(r, 20));
    if (failed !== null) throw failed;
    const before = rounds;
    const m = await migrateShards(tool, 11);
    const during = rounds - before;
    // A replica started on the new count joins after the move, on the same keys.
    await late.init();
    const lateOutcomes = await Promise.all(Array.from({ length: keys }, (_, k) => late.incidents.decide(claim(k, 'MAJOR'))));
    stop = true;
    await Promise.all(clients);
    if (failed !== null) throw failed;
    console.log(
      `migrate under load: ${JSON.stringify(m.records)} moved, ${m.copied} keys copied, ${m.removed} removed; ${rounds} decisions, ${during} while the keys moved; outcomes ${JSON.stringify(outcomes)}`,
    );
    assert.equal(m.state, 'started');
    assert.ok(during > 0, 'the replicas decided while the keys moved');
    assert.deepEqual(
      replicas.map((r) => r.layout.shards),
      [11, 11],
      'both replicas moved on their own',
    );
    assert.equal(created.size, keys, 'every key created');
    assert.deepEqual(
      [...created.values()].filter((n) => n > 1),
      [],
      'no key created twice',
    );
    assert.equal(lateOutcomes.filter((d) => d.outcome.kind === 'created').length, 0, 'the late replica finds every record');
    assert.deepEqual(
      [...new Set(recordTags(redis.cluster.nodes))].sort((a, b) => a - b),
      Array.from({ length: 11 }, (_, s) => s),
      'the records are in 11 shards',
    );
    assert.equal(recordTags(redis.cluster.nodes).length, keys, 'each record once');
    // A replica that moved delivers from all 11 shards (the old 4 drained where they are); every create once;
    // no two deliveries of a key and action share an Idempotency-Key's n.
    const sent = await drain(replicas[0]!);
    assert.ok(
      sent.some((d) => Number(d.id.split(':')[0]) >= 4),
      'deliveries from the new shards',
    );
    const creates = sent.filter((d) => d.entry.action === 'create');
    assert.equal(creates.length, keys);
    assert.equal(new Set(creates.map((d) => d.entry.key)).size, keys);
    const ids = sent.map((d) => `${d.entry.key}:${d.entry.action}:${d.n}`);
    assert.equal(new Set(ids).size, ids.length, 'no Idempotency-Key used twice');
  } finally {
    await Promise.all([...replicas.map((r) => r.close()), late.close(), tool.close()]);
  }
});

test('every kind of record moves: incidents, windows, devices and their seen events, tickets, groups and members, flaps, Idempotency-Keys, and the listings find them', async () => {
  redis.single.cli('FLUSHALL');
  const old = store(redis.single.url, 4);
  const tool = redisConnection(redis.single.url);
  const n = 12;
  const ids = Array.from({ length: n }, (_, i) => `rec-${i}`);
  const event = (i: number) => ({ tenant: 'default', device: `dev-${i}`, boot: 'b1', sequence: 5, state: 'DOWN', observedAt: 1_700_000_000_000 + i });
  const owner = (id: string) => ({ adapter: 'jira', tenant: 'default', kind: 'incident' as const, key: id });
  const group = (id: string) => ({ tenant: 'default', groupKey: `g-${id}`, by: { site: id }, members: { [id]: 'MAJOR' }, createdAt: 1 });
  try {
    await old.init();
    for (const [i, id] of ids.entries()) {
      assert.equal(await old.windows.claim('default', id, 600_000), 'claimed');
      assert.equal((await old.devices.apply(event(i), 600_000)).outcome, 'applied');
      assert.equal(await old.tickets.claim(owner(id), `JIRA-${i}`, 600_000), `JIRA-${i}`);
      assert.equal(await old.groups.commit('default', `g-${id}`, 0, group(id), null), true);
      await old.groups.remember('default', id, `g-${id}`);
      await old.flaps.record('default', id, 'create', 1000 + i, 600_000);
      await old.flaps.record('default', id, 'close', 2000 + i, 600_000);
      assert.equal((await old.requests.begin('default', `req-${id}`, 'h1', 60_000, 1_000_000)).state, 'new');
      const a = { status: 200, contentType: 'application/json', body: `{"i":${i}}` };
      await old.requests.finish('default', `req-${id}`, 'h1', { whole: a, digest: a }, 600_000, 1_000_000_000);
      assert.equal((await old.incidents.decide({ tenant: 'default', key: `inc-${id}`, fingerprint: 'MAJOR|0', ttlMs: 600_000 })).outcome.kind, 'created');
    }
    const m = await migrateShards(tool, 13);
    assert.deepEqual(
      Object.fromEntries(Object.entries(m.records).sort()),
      { device: n, flap: n, group: n, incident: n, member: n, request: n, seen: n, ticket: n, window: n },
      'each record found once in the old layout',
    );
    // Read back through a store on 13 shards (the old copies of what moved are gone).
    const now = store(redis.single.url, 13);
    try {
      await now.init();
      for (const [i, id] of ids.entries()) {
        assert.equal(await now.windows.claim('default', id, 600_000), 'repeat', `${id}: the window still claimed`);
        assert.deepEqual(await now.devices.get('default', `dev-${i}`), event(i));
        assert.equal((await now.devices.apply(event(i), 600_000)).outcome, 'duplicate', `${id}: the event was seen`);
        assert.equal(await now.tickets.find(owner(id), 600_000), `JIRA-${i}`);
        assert.deepEqual((await now.groups.get('default', `g-${id}`))?.members, { [id]: 'MAJOR' });
        assert.equal(await now.groups.memberOf('default', id), `g-${id}`);
        assert.deepEqual(
          (await now.flaps.history('default', id, 0)).map((t) => t.action),
          ['create', 'close'],
        );
        const again = await now.requests.begin('default', `req-${id}`, 'h1', 60_000, 1_000_000);
        assert.equal(again.state === 'done' && again.answer.body, `{"i":${i}}`);
      }
      assert.equal(await now.queries.countStaleDevices(Number.MAX_SAFE_INTEGER), n, 'each device once in the freshness indexes');
      // The listings read the tenant's own indexes: each record once, from the shard it moved to.
      assert.deepEqual((await now.queries.listIncidents('default', 100)).map((r) => r.key).sort(), ids.map((id) => `inc-${id}`).sort());
      assert.deepEqual((await now.queries.listDevices('default', 100)).map((d) => d.device).sort(), ids.map((_, i) => `dev-${i}`).sort());
      const indexed = (kind: string) =>
        Array.from({ length: 13 }, (_, s) => redis.single.cli('ZCARD', `{oo:${s}}:${kind}:7.default`)).reduce((a, b) => a + Number(b), 0);
      assert.deepEqual([indexed('ti'), indexed('tf')], [n, n], 'each record named once in the listing indexes, its old entries gone');
    } finally {
      await now.close();
    }
  } finally {
    await Promise.all([old.close(), tool.close()]);
  }
});

const run = (...args: string[]) => spawnSync(process.execPath, [CLI, ...args], { cwd: REPO_ROOT, encoding: 'utf8', timeout: 30_000 });

test('onceonly migrate-shards: moves and says what it moved; refuses going down, a bad count and a store without shards (exit 2, nothing changed)', async () => {
  redis.single.cli('FLUSHALL');
  const s = store(redis.single.url, 4);
  try {
    await s.init();
    await Promise.all(Array.from({ length: 30 }, (_, k) => s.incidents.decide(claim(k))));
    const before = redis.single.cli('DBSIZE');
    for (const [args, message] of [
      [['--to', '2'], /laid out in 4 shards; a shard move only adds shards/],
      [['--to', '0'], /--to must be a whole number from 1 to 16384/],
      [['--to', 'many'], /--to must be a whole number/],
    ] as const) {
      const r = run('migrate-shards', '--store', redis.single.url, ...args);
      assert.equal(r.status, 2, r.stderr);
      assert.match(r.stderr, message);
      assert.equal(redis.single.cli('DBSIZE'), before, 'nothing changed');
      assert.equal(redis.single.cli('GET', LAYOUT_KEY), '4');
    }
    const pg = run('migrate-shards', '--store', 'sqlite:./nowhere.db', '--to', '8');
    assert.equal(pg.status, 2);
    assert.match(pg.stderr, /is not a Redis store/);
    const ok = run('migrate-shards', '--store', redis.single.url, '--to', '8');
    assert.equal(ok.status, 0, ok.stderr);
    assert.match(ok.stdout, /^moved from 4 to 8 shards: 30 incident; \d+ keys copied, \d+ old copies removed$/m);
    const same = run('migrate-shards', '--store', redis.single.url, '--to', '8');
    assert.equal(same.status, 0);
    assert.match(same.stdout, /laid out in 8 shards already/);
    // A replica still configured with the old count is refused at start, naming both.
    const stale = store(redis.single.url, 4);
    await assert.rejects(stale.init(), /holds keys laid out in 8 shards .*redis\.shards: 4/).finally(() => stale.close());
    // The running one moved on its first call and finds every record.
    const again = await Promise.all(Array.from({ length: 30 }, (_, k) => s.incidents.decide(claim(k))));
    assert.equal(again.filter((d) => d.outcome.kind === 'unchanged').length, 30);
  } finally {
    await s.close();
  }
});

test('onceonly serve on the old count answers through the move: the same faults are SUPPRESSed, and it says it moved', async () => {
  redis.single.cli('FLUSHALL');
  const dir = tempDir();
  const config = join(dir.path, 'four.yaml');
  writeFileSync(config, `redis: { shards: 4 }\nfailopen: { timeout_ms: 2000, journal_path: ${join(dir.path, 'journal.db')} }\n`);
  const server = await spawnServer(['--port', '0', '--store', redis.single.url, '--config', config]);
  const post = async (k: number) => {
    const res = await fetch(`${server.url}/v1/incidents`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ element_id: `srv-${k}`, fault_class: 'LOS', root_cause_id: 'cut-9', severity: 'MAJOR' }),
    });
    assert.equal(res.status, 200);
    return ((await res.json()) as { decision: string }).decision;
  };
  try {
    const first = await Promise.all(Array.from({ length: 40 }, (_, k) => post(k)));
    assert.deepEqual(new Set(first), new Set(['CREATE']));
    const moved = run('migrate-shards', '--store', redis.single.url, '--to', '16');
    assert.equal(moved.status, 0, moved.stderr);
    const again = await Promise.all(Array.from({ length: 40 }, (_, k) => post(k)));
    assert.deepEqual(new Set(again), new Set(['SUPPRESS']), 'every fault found in its new shard');
    const said = server.lines.filter((l) => l.includes('moving from 4 to 16 shards'));
    assert.equal(said.length, 1, 'one warning, naming both counts');
    assert.match(said[0]!, /set redis\.shards: 16 before its next start/);
  } finally {
    await server.stop();
    dir.remove();
  }
});
