// needs: redis postgres
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { systemClock } from '../../src/core/clock.js';
import { StoreRefusedError } from '../../src/store/errors.js';
import { FailOpenStore } from '../../src/store/failopen/fail-open-store.js';
import { Journal } from '../../src/store/failopen/journal.js';
import { redisConnection } from '../../src/store/redis/connection.js';
import { RedisStore } from '../../src/store/redis/redis-store.js';
import { freshSchema } from '../helpers/postgres.js';
import { inProcessServer } from '../helpers/server.js';
import { startRedis } from '../helpers/redis.js';
import { tempDir } from '../helpers/tmp.js';

/**
 * Only an unreachable store fails a replica open. A store that answers and
 * refuses (full, a value past its limits, any reply not known to mean
 * "unreachable") fails that request alone, with an error that says so, and
 * the replica goes on deciding on the store for everyone else.
 */
const claim = (tenant: string, i: number) => ({ tenant, key: `dedup:${i.toString(16).padStart(32, '0')}`, fingerprint: 'MAJOR|0', ttlMs: 600_000 });

/** Writes 8 KiB values until Redis refuses one; answers its refusal. */
async function fill(url: string): Promise<string> {
  const conn = redisConnection(url);
  const value = 'x'.repeat(8 * 1024);
  try {
    for (let i = 0; i < 5000; i++) {
      const refused = await conn.send(`fill${i}`, ['SET', `fill${i}`, value]).then(
        () => null,
        (e: Error) => e.message,
      );
      if (refused) {
        // Well past the limit, not hovering at it (where a small write may still fit).
        await conn.send('', ['CONFIG', 'SET', 'maxmemory', '1mb']);
        return refused;
      }
    }
    return 'never refused';
  } finally {
    await conn.close();
  }
}

test('Redis at maxmemory with noeviction: a write fails alone as "full" (503), the replica never fails open', async () => {
  const redis = await startRedis(['--maxmemory', '3mb', '--maxmemory-policy', 'noeviction']);
  const dir = tempDir();
  const degraded: boolean[] = [];
  const store = new FailOpenStore(new RedisStore(redisConnection(redis.url)), new Journal(join(dir.path, 'j.db'), systemClock), systemClock, {
    timeoutMs: 50,
    events: { degraded: (d) => degraded.push(d) },
  });
  try {
    await store.init();
    assert.equal((await store.incidents.decide(claim('a', 0))).outcome.kind, 'created', 'decided before the store filled');
    // Fill it past maxmemory, as kept answers of one tenant would.
    assert.match(await fill(redis.url), /^OOM/);
    for (const tenant of ['a', 'b']) {
      for (let i = 1; i <= 5; i++) {
        const err = await store.incidents.decide(claim(tenant, i)).then(
          () => null,
          (e: unknown) => e,
        );
        assert.ok(err instanceof StoreRefusedError, `a full store refuses the write: ${String(err)}`);
        assert.equal(err.full, true);
        assert.match(err.message, /the store is full.*OOM/);
      }
    }
    assert.equal(store.isDegraded, false, 'a full store is not an outage: no provisional answers');
    assert.deepEqual(degraded, []);
    await store.ping();
    assert.ok(await store.incidents.get('a', claim('a', 0).key), 'reads still reach the store');
  } finally {
    await store.close();
    await redis.stop();
    dir.remove();
  }

  // Over HTTP: 503 unavailable, saying the store is full; /readyz stays 200 (the store answers).
  const redis2 = await startRedis(['--maxmemory', '3mb', '--maxmemory-policy', 'noeviction']);
  const server = await inProcessServer({ store: redis2.url });
  try {
    assert.match(await fill(redis2.url), /^OOM/);
    const r = await server.post('/v1/incidents', { element_id: 'olt-1', fault_class: 'LOS', root_cause_id: 'cut', severity: 'MAJOR' });
    assert.equal(r.status, 503);
    assert.equal(r.body.error.code, 'unavailable');
    assert.match(r.body.error.message, /full/);
    assert.equal((await server.get('/readyz')).status, 200);
  } finally {
    await server.stop();
    await redis2.stop();
  }
});

test('Postgres refusing a value past its index limit (SQLSTATE 54000) fails that request alone; the next decision is not provisional', async () => {
  const s = await freshSchema();
  const dir = tempDir();
  const degraded: boolean[] = [];
  const store = new FailOpenStore(s.open(systemClock), new Journal(join(dir.path, 'j.db'), systemClock), systemClock, {
    timeoutMs: 1000,
    events: { degraded: (d) => degraded.push(d) },
  });
  try {
    await store.init();
    // An inhibition source recorded under a 4,000-character label value (random, so it does not compress): past btree's row limit.
    const err = await store.inhibitors.put('a', 'rule-0', randomBytes(3000).toString('base64'), 'am:src', 60_000).then(
      () => null,
      (e: unknown) => e,
    );
    assert.ok(err instanceof StoreRefusedError, String(err));
    assert.equal(err.full, false);
    assert.match(err.message, /SQLSTATE 54000/);
    assert.equal(store.isDegraded, false);
    assert.deepEqual(degraded, []);
    const next = await store.incidents.decide(claim('b', 1));
    assert.deepEqual([next.outcome.kind, next.provisional], ['created', undefined], "another tenant's decision is made on Postgres");
  } finally {
    await store.close();
    await s.drop();
    dir.remove();
  }
});
