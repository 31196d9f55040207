// needs: redis
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { systemClock } from '../../src/core/clock.js';
import { FailOpenStore, StoreUnavailableError } from '../../src/store/failopen/fail-open-store.js';
import { Journal } from '../../src/store/failopen/journal.js';
import { redisConnection } from '../../src/store/redis/connection.js';
import { RedisStore } from '../../src/store/redis/redis-store.js';
import { freePort, startRedis, type RedisServer } from '../helpers/redis.js';
import { tempDir } from '../helpers/tmp.js';

let redis: RedisServer;
before(async () => {
  redis = await startRedis();
});
after(() => redis?.stop());

const claim = (i: number) => ({ tenant: 'default', key: `dedup:${i.toString(16).padStart(32, '0')}`, fingerprint: 'MAJOR|0', ttlMs: 600_000 });

test('a replay that crashed half-way runs again without double counting, and every key ends live once', async () => {
  const dir = tempDir();
  const journalPath = join(dir.path, 'journal.db');
  try {
    // 1. The store is down (nothing listens on this port): 20 incidents are journaled.
    const deadUrl = `redis://127.0.0.1:${await freePort()}`;
    const down = new FailOpenStore(new RedisStore(redisConnection(deadUrl)), new Journal(journalPath, systemClock), systemClock, {
      timeoutMs: 50,
      probeIntervalMs: 60_000,
    });
    for (let i = 0; i < 20; i++) {
      const r = await down.incidents.decide(claim(i));
      assert.equal(r.provisional, true);
      assert.equal(r.outcome.kind, 'created');
    }
    assert.equal((await down.incidents.decide(claim(0))).outcome.kind, 'unchanged', 'the journal deduplicates locally too');
    await assert.rejects(down.ping(), StoreUnavailableError);
    await assert.rejects(down.incidents.close('default', claim(0).key), StoreUnavailableError);
    await down.close();

    // 2. A replay starts against the live store and "crashes" after replaying half.
    const journal = new Journal(journalPath, systemClock);
    const live = new RedisStore(redisConnection(redis.url));
    const taken = await journal.takeBatch(100);
    assert.equal(taken.length, 20);
    for (const rec of taken.slice(0, 10)) {
      assert.equal(await live.incidents.reconcile(rec, 600_000, journal.entryId(rec)), 'claimed');
    }
    await journal.close(); // crash: nothing forgotten, half replayed

    // 3. At restart the parked entries are found and replayed again.
    const outcomes: string[] = [];
    let recovered!: () => void;
    const back = new Promise<void>((r) => (recovered = r));
    const store = new FailOpenStore(live, new Journal(journalPath, systemClock), systemClock, {
      timeoutMs: 200,
      probeIntervalMs: 20,
      events: {
        reconciled: (o) => outcomes.push(o),
        degraded: (d) => {
          if (!d) recovered();
        },
      },
    });
    assert.equal(store.isDegraded, true, 'a journal with entries starts degraded');
    await back;
    assert.deepEqual({ done: outcomes.filter((o) => o === 'done').length, claimed: outcomes.filter((o) => o === 'claimed').length }, { done: 10, claimed: 10 });
    assert.equal(store.journal.size(), 0);
    for (let i = 0; i < 20; i++) {
      const rec = await store.incidents.get('default', claim(i).key);
      assert.ok(rec, `key ${i} is live`);
      assert.equal(rec.refires, i === 0 ? 1 : 0, 'the local re-fire is carried over, nothing doubled');
    }
    const r = await store.incidents.decide(claim(3));
    assert.equal(r.provisional, undefined);
    assert.equal(r.outcome.kind, 'unchanged');
    await store.close();
  } finally {
    dir.remove();
  }
});
