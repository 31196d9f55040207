// needs: redis
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { redisConnection } from '../../src/store/redis/connection.js';
import { RedisStore } from '../../src/store/redis/redis-store.js';
import type { IncidentRecord } from '../../src/store/contract/index.js';
import { silenceKeys, keyLayout } from '../../src/store/redis/keys.js';
import { isTransportFault } from '../../src/store/errors.js';
import { ACK_MEMORY_MS, COUNTER_MEMORY_MS, RECONCILE_MARKER_MS, SILENCE_RETENTION_MS } from '../../src/store/contract/index.js';
import { singleAndCluster } from '../helpers/redis.js';
import { GRACE_UNITS } from './incident-store.contract.js';
import { everyFacetContract } from './every-facet.js';

/** The default layout's keys (64 shards), as a store opened without `shards` uses them. */
const { ackMarkerKey, allShards, incidentRecordKey, reconcileMarkerKey } = keyLayout();

// Redis decides on its own clock (TIME inside the script), so time is real
// here: one unit is 100 ms, and the TTL cases sleep about four seconds.
const unit = 100;
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

const redis = singleAndCluster();

// Each case starts on an empty database: keys another case left would expire
// during this one, on Redis's own clock, and move the live count under it.
const flush = (kind: 'redis' | 'redis-cluster') => {
  for (const node of kind === 'redis' ? [redis.single] : redis.cluster.nodes) node.cli('FLUSHALL');
};
const fixture = (url: () => string, kind: 'redis' | 'redis-cluster', shards?: number) => () => {
  const open = () => new RedisStore(redisConnection(url()), kind, { expiredGraceMs: GRACE_UNITS * unit, ...(shards ? { shards } : {}) });
  const node = kind === 'redis' ? redis.single : redis.cluster.nodes[0]!;
  const layout = keyLayout(shards);
  return {
    store: open(),
    openPeer: open,
    unit,
    advance: sleep,
    cleanup: () => flush(kind),
    // Redis's own clock, as the scripts read it (TIME, to the millisecond).
    serverNow: async () => {
      const [s, us] = node.cli('TIME').split('\n').map(Number) as [number, number];
      return s * 1000 + Math.floor(us / 1000);
    },
    // -c follows a cluster's redirect to the node that holds the key.
    holds: async (tenant: string, key: string) => node.cli('-c', 'EXISTS', layout.incidentRecordKey(tenant, key)) === '1',
  };
};

const redisBackend = { peers: true, sweepsOnClock: false, replays: true };
everyFacetContract(
  'redis',
  redisBackend,
  fixture(() => redis.single.url, 'redis'),
);
everyFacetContract(
  'redis cluster (3 masters)',
  redisBackend,
  fixture(() => redis.cluster.url, 'redis-cluster'),
);
// Another shard count than the default: nothing may assume 64 (the facets whose keys are spread over the shards).
everyFacetContract(
  'redis cluster (3 masters, 5 shards)',
  redisBackend,
  fixture(() => redis.cluster.url, 'redis-cluster', 5),
  ['incidents', 'deliveries'],
);

// One shard: every key shares one hash tag, so a key that lost its tenant would collide with another tenant's.
everyFacetContract(
  'redis (1 shard)',
  redisBackend,
  fixture(() => redis.single.url, 'redis', 1),
  ['incidents', 'deliveries', 'windows'],
);

describe('redis: backend-only', () => {
  test('the live index holds only what is live: a close removes its entry, an expiry is trimmed, a reconcile adds one', async () => {
    const store = new RedisStore(redisConnection(redis.single.url), 'redis', { expiredGraceMs: 0 });
    const entries = async () => {
      let n = 0;
      for (const k of allShards('lv')) n += Number(await store.conn.send(k, ['ZCARD', k]));
      return n;
    };
    try {
      flush('redis');
      const keys = ['a', 'b', 'c'].map((k) => `dedup:${k}${Date.now()}`);
      // 2 s to live: long enough that a loaded machine counts them before they expire (300 ms was not, under CI).
      for (const key of keys) await store.incidents.decide({ tenant: 'default', key, fingerprint: 'MAJOR|0', ttlMs: 2000 });
      // From the last decision, not the first: on a loaded machine the three took more than 200 ms.
      const started = Date.now();
      assert.deepEqual([await store.queries.countLiveIncidents(), await entries()], [3, 3]);
      await store.incidents.close('default', keys[0]!);
      assert.deepEqual([await store.queries.countLiveIncidents(), await entries()], [2, 2], 'the close took its entry out');
      await sleep(Math.max(0, started + 2200 - Date.now()));
      assert.deepEqual([await store.queries.countLiveIncidents(), await entries()], [0, 0], 'the expired entries were trimmed by the count');
      const rec: IncidentRecord = {
        tenant: 'default',
        key: keys[1]!,
        fingerprint: 'MAJOR|0',
        createdAt: Date.now(),
        lastSeenAt: Date.now(),
        refires: 0,
        updates: 0,
        expiresAt: Date.now() + 60_000,
      };
      assert.equal(await store.incidents.reconcile(rec, 60_000, 'j1'), 'claimed');
      assert.equal(await store.queries.countLiveIncidents(), 1, 'a provisional CREATE replayed is live');
      assert.equal(Number(redis.single.cli('DBSIZE')) > 1, true, 'while the database holds more than the live incident (its marker, the outbox)');
    } finally {
      await store.close();
    }
  });

  test('Redis deletes a silence itself, the retention after it ends (its expiry is set by every write)', async () => {
    const store = new RedisStore(redisConnection(redis.single.url));
    try {
      const tenant = `sil${Date.now()}`;
      const now = Date.now();
      const s = {
        id: 'a',
        tenant,
        matchers: [{ name: 'kind', value: 'incident', isRegex: false, isEqual: true }],
        startsAt: now,
        endsAt: now + 3_600_000,
        createdBy: 'x',
        comment: '',
        updatedAt: now,
      };
      assert.equal(await store.silences.create(s, { open: 10, ended: 1000 }, now), true);
      const pttl = async () => Number(await store.conn.send(silenceKeys.silence(tenant, 'a'), ['PTTL', silenceKeys.silence(tenant, 'a')]));
      const left = await pttl();
      assert.ok(Math.abs(left - (3_600_000 + SILENCE_RETENTION_MS)) < 60_000, `expires its retention after its end, PTTL ${left}`);
      await store.silences.expire(tenant, 'a', now);
      const after = await pttl();
      assert.ok(Math.abs(after - SILENCE_RETENTION_MS) < 60_000, `an expired silence is kept the retention from now, PTTL ${after}`);
    } finally {
      await store.close();
    }
  });

  test("a key's order does not wait forever on a delivery whose hash is gone (evicted)", async () => {
    const store = new RedisStore(redisConnection(redis.single.url));
    try {
      const tenant = `ev${Date.now()}`;
      const claim = { tenant, key: 'dedup:evicted', fingerprint: 'MAJOR|0', ttlMs: 60_000, outbox: { severity: 'MAJOR', summary: 's', data: {} } };
      await store.incidents.decide(claim);
      await store.incidents.decide({ ...claim, fingerprint: 'CRITICAL|0' });
      while ((await store.deliveries.fanOut(['hook'], 1000)) > 0);
      const mine = async () => (await store.deliveries.leaseDue('w', 3 * unit, 1000)).filter((d) => d.entry.tenant === tenant);
      const [head, ...rest] = await mine();
      assert.deepEqual([head?.entry.action, rest.length], ['create', 0]);
      // Redis under a maxmemory policy evicts the head's hash: the update behind it must still go out.
      const member = head!.id.split(':').slice(1).join(':');
      const hashKey = redis.single.cli('--scan', '--pattern', `*:x:${member}`);
      assert.ok(hashKey, 'found the delivery hash');
      redis.single.cli('DEL', hashKey);
      await sleep(4 * unit); // the update, held back behind the head, is due again after a lease
      const next = await mine();
      assert.deepEqual(
        next.map((d) => d.entry.action),
        ['update'],
      );
    } finally {
      await store.close();
    }
  });

  test('a live record stays compact (MEMORY USAGE)', async () => {
    const store = new RedisStore(redisConnection(redis.single.url));
    try {
      const n = 200;
      for (let i = 0; i < n; i++) {
        await store.incidents.decide({
          tenant: 'default',
          key: `dedup:${i.toString(16).padStart(32, '0')}`,
          fingerprint: 'CRITICAL|0',
          ttlMs: 3_600_000,
        });
      }
      let total = 0;
      for (let i = 0; i < n; i++) {
        total += Number(redis.single.cli('MEMORY', 'USAGE', incidentRecordKey('default', `dedup:${i.toString(16).padStart(32, '0')}`)));
      }
      const perKey = total / n;
      console.log(`bytes per live incident (MEMORY USAGE, mean of ${n}): ${perKey.toFixed(1)}`);
      // The record is one short string: key ~56 B, value ~40 B, plus Redis's own overhead.
      assert.ok(perKey > 0 && perKey < 200, `${perKey} bytes per key`);
    } finally {
      await store.close();
    }
  });

  // Counted from a reset, so calls made by earlier tests on this server cannot satisfy it.
  test('scripts are called by SHA and reloaded after SCRIPT FLUSH (NOSCRIPT)', async () => {
    const store = new RedisStore(redisConnection(redis.single.url));
    const stat = (cmd: string) => {
      const m = new RegExp(`cmdstat_${cmd}:calls=(\\d+).*failed_calls=(\\d+)`).exec(redis.single.cli('INFO', 'commandstats'));
      return { calls: Number(m?.[1] ?? 0), failed: Number(m?.[2] ?? 0) };
    };
    try {
      const claim = { tenant: 't', key: `k-${Date.now()}`, fingerprint: 'MAJOR|0', ttlMs: 60_000 };
      assert.equal((await store.incidents.decide(claim)).outcome.kind, 'created'); // the script is now loaded
      /** One more decision of the key, counted from a reset: the EVALSHA and EVAL calls it made. */
      const counted = async () => {
        redis.single.cli('CONFIG', 'RESETSTAT');
        assert.equal((await store.incidents.decide(claim)).outcome.kind, 'unchanged');
        return [stat('evalsha'), stat('eval')];
      };
      const bySha = [
        { calls: 1, failed: 0 },
        { calls: 0, failed: 0 },
      ];
      assert.deepEqual(await counted(), bySha, 'by SHA only, the source not sent');
      redis.single.cli('SCRIPT', 'FLUSH');
      assert.deepEqual(
        await counted(),
        [
          { calls: 1, failed: 1 },
          { calls: 1, failed: 0 },
        ],
        'NOSCRIPT, then the source once',
      );
      assert.deepEqual(await counted(), bySha, 'by SHA again once reloaded');
    } finally {
      await store.close();
    }
  });
  for (const [where, url, kind] of [
    ['one server', () => redis.single.url, 'redis'],
    ['a cluster', () => redis.cluster.url, 'redis-cluster'],
  ] as const) {
    test(`claims made together go in one call on ${where}: each decided as alone, in order, and a claim on a key of the wrong type fails alone`, async () => {
      const store = new RedisStore(redisConnection(url()), kind);
      try {
        const tenant = `group${Date.now()}`;
        const claim = (key: string, fingerprint = 'MAJOR|0') => ({
          tenant,
          key,
          fingerprint,
          ttlMs: 60_000,
          outbox: { severity: 'MAJOR', summary: 's', data: {} },
        });
        const bad = incidentRecordKey(tenant, 'dedup:bad');
        await store.conn.send(bad, ['HSET', bad, 'not', 'a record']);
        if (kind === 'redis') redis.single.cli('CONFIG', 'RESETSTAT');
        // All in one turn of the event loop: one group.
        const keys = Array.from({ length: 40 }, (_, i) => `dedup:g${i}`);
        const settled = await Promise.allSettled([
          ...keys.map((k) => store.incidents.decide(claim(k))),
          store.incidents.decide(claim('dedup:bad')),
          store.incidents.decide(claim('dedup:g0', 'CRITICAL|0')),
        ]);
        const kinds = settled.map((r) => (r.status === 'fulfilled' ? r.value.outcome.kind : 'rejected'));
        assert.deepEqual(kinds.slice(0, 40), Array(40).fill('created'), 'every other claim decided as alone');
        assert.equal(kinds[41], 'changed', 'the second claim on a key is decided after the first, in line order');
        const refused = settled[40]!;
        assert.equal(refused.status, 'rejected');
        const err = (refused as PromiseRejectedResult).reason as Error;
        assert.match(err.message, /WRONGTYPE/);
        assert.equal(isTransportFault(err), false, 'a data error: the replica does not fail open for it');
        if (kind === 'redis') {
          const calls = Number(/cmdstat_evalsha:calls=(\d+)/.exec(redis.single.cli('INFO', 'commandstats'))?.[1]);
          assert.equal(calls, 1, 'one script call for the 42 claims');
        }
        assert.equal((await store.incidents.get(tenant, 'dedup:g0'))?.fingerprint, 'CRITICAL|0');
      } finally {
        await store.close();
      }
    });
  }
  test('lifetimes are the contract constants: counter, acknowledgement and reconcile markers expire as named', async () => {
    const store = new RedisStore(redisConnection(redis.single.url));
    try {
      const tenant = `life${Date.now()}`;
      const key = 'dedup:lifetimes';
      await store.incidents.decide({ tenant, key, fingerprint: 'MAJOR|0', ttlMs: 60_000, outbox: { severity: 'MAJOR', summary: 's', data: {} } });
      while ((await store.deliveries.fanOut(['hook'], 1000)) > 0);
      assert.equal(await store.incidents.acknowledge(tenant, key), 'acknowledged');
      const rec = (await store.incidents.get(tenant, key))!;
      assert.equal(await store.incidents.reconcile(rec, 60_000, 'journal-1:1'), 'merged');
      const pttl = (k: string) => Number(redis.single.cli('PTTL', k));
      const within = (ms: number, want: number, what: string) => assert.ok(ms <= want && ms > want - 60_000, `${what}: PTTL ${ms}, want about ${want}`);
      within(pttl(ackMarkerKey(tenant, key)), ACK_MEMORY_MS, 'acknowledgement marker');
      within(pttl(reconcileMarkerKey(tenant, key, 'journal-1:1')), RECONCILE_MARKER_MS, 'reconcile marker');
      const counter = redis.single.cli('--scan', '--pattern', `*:n:*${tenant}*`);
      assert.ok(counter, 'found the counter');
      within(pttl(counter), COUNTER_MEMORY_MS, 'Idempotency-Key counter');
    } finally {
      await store.close();
    }
  });
});
