// needs: redis
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { systemClock } from '../../src/core/clock.js';
import { SilenceCache } from '../../src/mute/silence-cache.js';
import { FailOpenStore } from '../../src/store/failopen/fail-open-store.js';
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

/** A replica's store and silence copy; it closes both whatever the body does, so a failed assertion fails instead of hanging. */
async function withReplica(url: string, journalPath: string, body: (r: { store: FailOpenStore; cache: SilenceCache }) => Promise<void>) {
  const journal = new Journal(journalPath, systemClock);
  const store = new FailOpenStore(new RedisStore(redisConnection(url)), journal, systemClock, { timeoutMs: 50, probeIntervalMs: 60_000 });
  const cache = new SilenceCache(store.silences, () => {}, 60_000, journal);
  try {
    await body({ store, cache });
  } finally {
    cache.stop();
    await store.close();
  }
}
const labels = { element_id: 'olt-9', fault_class: 'LOS', severity: 'MAJOR', kind: 'incident', dedup_key: 'dedup:x' };

// A replica keeps the silences it loaded in its fail-open journal, so one
// restarted while the shared store is unreachable still mutes with them
// instead of paging for every silenced key it decides provisionally; the first
// read that reaches the store again replaces that copy.
test('a replica restarted while the store is away mutes with the silences it kept; the store, once back, replaces them', async () => {
  const dir = tempDir();
  const journalPath = join(dir.path, 'journal.db');
  const now = Date.now();
  const id = randomUUID();
  try {
    // 1. The store is up: a silence is made and loaded, and so kept in the journal.
    await withReplica(redis.url, journalPath, async ({ store, cache }) => {
      const silence = {
        id,
        tenant: 'default',
        matchers: [{ name: 'element_id', value: 'olt-9', isEqual: true, isRegex: false }],
        startsAt: now - 1000,
        endsAt: now + 3_600_000,
        createdBy: 'noc',
        comment: 'splicing',
        updatedAt: now,
      };
      assert.equal(await store.silences.create(silence, { open: 1000, ended: 1000 }, now), true);
      await cache.start();
      assert.deepEqual(cache.mutedBy('default', labels, Date.now()), { by: 'silence', id });
    });

    // 2. Restarted with nothing listening where the store was: the kept copy mutes.
    const deadUrl = `redis://127.0.0.1:${await freePort()}`;
    await withReplica(deadUrl, journalPath, async ({ cache }) => {
      await cache.start();
      assert.deepEqual(cache.mutedBy('default', labels, Date.now()), { by: 'silence', id }, 'the kept silence mutes after the restart');
      assert.equal(cache.mutedBy('default', { ...labels, element_id: 'olt-8' }, Date.now()), null, 'and only what it matches');
    });

    // 3. The same restart with a journal that never loaded any silence mutes nothing: the copy is what mutes.
    await withReplica(deadUrl, join(dir.path, 'other.db'), async ({ cache }) => {
      await cache.start();
      assert.equal(cache.mutedBy('default', labels, Date.now()), null);
    });

    // 4. The silence was expired meanwhile; a replica that reaches the store again reads that, not its copy.
    const direct = new RedisStore(redisConnection(redis.url));
    try {
      assert.equal(await direct.silences.expire('default', id, Date.now()), true);
    } finally {
      await direct.close();
    }
    await withReplica(redis.url, journalPath, async ({ cache }) => {
      await cache.start();
      assert.equal(cache.mutedBy('default', labels, Date.now()), null, 'the store answered: its expiry wins over the kept copy');
    });
  } finally {
    dir.remove();
  }
});
