// needs: redis
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { systemClock } from '../../src/core/clock.js';
import { FailOpenStore } from '../../src/store/failopen/fail-open-store.js';
import { Journal } from '../../src/store/failopen/journal.js';
import { redisConnection } from '../../src/store/redis/connection.js';
import { RedisStore } from '../../src/store/redis/redis-store.js';
import { startRedis } from '../helpers/redis.js';
import { tempDir } from '../helpers/tmp.js';
import { until } from '../helpers/wait.js';

/**
 * The journal remembers, for the whole outage, the keys it answered: a
 * second degraded episode answers a repeat SUPPRESS, not a second CREATE.
 * And that memory never costs a fault: a key closed on the shared store
 * between the episodes is decided again as a CREATE when the replay finds it gone.
 */
test('two degraded episodes of one outage: one provisional CREATE, then a repeat; a key closed meanwhile is created again at replay', async () => {
  const redis = await startRedis();
  const dir = tempDir();
  const outcome = { tenant: 'default', fingerprint: 'MAJOR|0', ttlMs: 600_000 };
  const claim = (key: string) => ({ ...outcome, key, outbox: { severity: 'MAJOR', summary: key, data: { element_id: key } } });
  const reconciled: string[] = [];
  const store = new FailOpenStore(new RedisStore(redisConnection(redis.url)), new Journal(join(dir.path, 'j.db'), systemClock), systemClock, {
    timeoutMs: 50,
    probeIntervalMs: 30,
    events: { reconciled: (o) => reconciled.push(o) },
  });
  const other = new RedisStore(redisConnection(redis.url));
  const [kept, closed] = ['dedup:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa', 'dedup:bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb'];
  const episode = async (body: () => Promise<void>) => {
    await redis.kill('SIGSTOP');
    try {
      await body();
    } finally {
      await redis.kill('SIGCONT');
    }
    await until(
      () => (!store.isDegraded && store.journal.size() === 0) || null,
      20_000,
      () => 'replica back on the store',
    );
  };
  try {
    await store.init();
    await episode(async () => {
      for (const key of [kept, closed]) {
        const r = await store.incidents.decide(claim(key));
        assert.deepEqual([r.outcome.kind, r.provisional], ['created', true], `${key}: the outage's first arrival is a provisional CREATE`);
      }
    });
    // The first key's call reached the paused Redis and ran when it resumed (merged); the second was journaled only (claimed).
    assert.deepEqual(reconciled.sort(), ['claimed', 'merged']);
    // Between the episodes another replica closes one of the two.
    assert.ok(await other.incidents.close('default', closed));
    reconciled.length = 0;

    await episode(async () => {
      for (const key of [kept, closed]) {
        const r = await store.incidents.decide(claim(key));
        assert.deepEqual([r.outcome.kind, r.provisional], ['unchanged', true], `${key}: a repeat in the same outage, not a second CREATE`);
      }
    });
    // The kept key merges; the closed one was gone from the store, so its replay claims it as a new fault.
    assert.deepEqual(reconciled.sort(), ['claimed', 'merged']);
    // Nothing is left to deliver from the journal: no worker ran here, so each first-episode create was
    // still owed at its replay, and the replay handed it to the shared store (the repeats owed nothing).
    assert.deepEqual(await store.journal.queries.listOutbox(), []);
    // The shared store's line holds each key's story in order: the closed key's create, the close another
    // replica made, and the new fault's create queued behind that close, so it reaches the receiver after it.
    const shared = async (key: string) => (await other.queries.listOutbox()).filter((e) => e.key === key).map((e) => e.action);
    assert.deepEqual(await shared(closed), ['create', 'close', 'create']);
    // The kept key: one create, its own decision that ran when Redis resumed. That decision is later than the
    // journal's arrivals, so at each replay the store's state stays and is sent once more (the journal's create
    // might have reached a receiver after it): updates that repeat the state, never a second create.
    const keptLine = (await other.queries.listOutbox()).filter((e) => e.key === kept);
    assert.deepEqual(
      keptLine.map((e) => `${e.action} ${e.severity}`),
      ['create MAJOR', ...keptLine.slice(1).map(() => 'update MAJOR')],
      'the kept key: one create, then its state again',
    );
    assert.ok(keptLine.length <= 3, `at most one repeat of the state per replay (${keptLine.length - 1})`);
    assert.ok(await store.incidents.get('default', closed), 'the closed key is live again');
  } finally {
    await other.close();
    await store.close();
    await redis.stop();
    dir.remove();
  }
});

/**
 * A provisional decision and a replay pass taking the journal's entries, at
 * once: the decision is one journal write (the memory of the outage, the
 * decision, the note), so the pass lands before or after it, never between.
 * As three writes, a pass that took the key's entry after the memory was
 * looked at left the decision finding no record: a second provisional CREATE
 * from one replica in one outage (nemesis seeds 43017, 50030, 50115).
 * Planted fault it catches: the journal's restore, decision and note as three writes.
 */
test('a replay pass between the journal looking at its memory and deciding never makes a second provisional CREATE', async () => {
  const redis = await startRedis();
  const dir = tempDir();
  const store = new FailOpenStore(new RedisStore(redisConnection(redis.url)), new Journal(join(dir.path, 'j.db'), systemClock), systemClock, {
    timeoutMs: 50,
    probeIntervalMs: 60_000, // no replay of its own while the test holds the store away
  });
  const claim = (key: string) => ({ tenant: 'default', key, fingerprint: 'MAJOR|0', ttlMs: 600_000, outbox: { severity: 'MAJOR', summary: key, data: {} } });
  try {
    await store.init();
    await redis.kill('SIGSTOP');
    const seen: string[] = [];
    // The pass lands after 0 to 11 turns of the event loop's microtasks, and after a macrotask: some of these fall between.
    for (let yields = 0; yields < 13; yields++) {
      const key = `dedup:${yields.toString(16).padStart(32, '0')}`;
      const first = await store.incidents.decide(claim(key));
      assert.deepEqual([first.outcome.kind, first.provisional], ['created', true]);
      const pass = (async () => {
        if (yields === 12) await new Promise((r) => setImmediate(r));
        else for (let i = 0; i < yields; i++) await Promise.resolve();
        return store.journal.takeBatch(1000);
      })();
      const [again] = await Promise.all([store.incidents.decide(claim(key)), pass]);
      seen.push(`${yields}:${again.outcome.kind}`);
      assert.equal(again.provisional, true);
    }
    assert.deepEqual(
      seen.filter((s) => s.endsWith(':created')),
      [],
      `the second arrival of each key, beside a replay pass: ${seen.join(' ')}`,
    );
  } finally {
    await redis.kill('SIGCONT');
    await store.close();
    await redis.stop();
    dir.remove();
  }
});
