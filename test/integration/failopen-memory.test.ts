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
    assert.deepEqual(await shared(kept), ['create'], 'the kept key: one create, its own decision that ran when Redis resumed');
    assert.ok(await store.incidents.get('default', closed), 'the closed key is live again');
  } finally {
    await other.close();
    await store.close();
    await redis.stop();
    dir.remove();
  }
});
