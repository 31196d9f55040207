// needs: redis postgres
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { manualClock } from '../../src/core/clock.js';
import { type ManualClock, systemClock } from '../../src/core/clock.js';
import type { SharedStore } from '../../src/store/contract/index.js';
import { FailOpenStore } from '../../src/store/failopen/fail-open-store.js';
import { Journal } from '../../src/store/failopen/journal.js';
import { redisConnection } from '../../src/store/redis/connection.js';
import { RedisStore } from '../../src/store/redis/redis-store.js';
import { freshSchema } from '../helpers/postgres.js';
import { type RedisServer, startRedis } from '../helpers/redis.js';
import { tempDir } from '../helpers/tmp.js';
import { GRACE_UNITS, type StoreFixture } from './incident-store.contract.js';
import { everyFacetContract } from './every-facet.js';
import { rulesContract } from './rules.contract.js';

/**
 * The fail-open decorator is a store like any other: with the shared store
 * answering, every contract case holds through it. (What it does while the
 * store is away is tested in integration/failopen-*.test.ts and the chaos suite.)
 * Its timeout is generous, so a loaded machine does not fail it open mid-case.
 */
const TIMEOUT_MS = 5000;
const failOpen = (inner: SharedStore, clock: ManualClock | typeof systemClock, dir: string, name: string) =>
  new FailOpenStore(inner, new Journal(join(dir, `${name}-journal.db`), clock), clock, { timeoutMs: TIMEOUT_MS });

let redis: RedisServer;
before(async () => {
  redis = await startRedis();
});
after(async () => {
  await redis?.stop();
});

// Redis decides on its own clock: time is real, one unit 100 ms (as in redis.test.ts).
const overRedis = (): StoreFixture => {
  const unit = 100;
  const dir = tempDir();
  let peers = 0;
  const open = () =>
    failOpen(new RedisStore(redisConnection(redis.url), 'redis', { expiredGraceMs: GRACE_UNITS * unit }), systemClock, dir.path, `r${peers++}`);
  const cleanup = () => {
    dir.remove();
    // An empty database for the next case (see redis.test.ts).
    redis.cli('FLUSHALL');
  };
  return { store: open(), openPeer: open, unit, advance: (ms) => new Promise((r) => setTimeout(r, ms)), cleanup };
};

// Postgres runs on the test's clock, so the lifetime rules can be checked through the decorator too.
const overPostgres = async (clock: ManualClock): Promise<StoreFixture> => {
  const unit = 1000;
  const s = await freshSchema();
  const dir = tempDir();
  let peers = 0;
  const open = () => failOpen(s.open(clock, GRACE_UNITS * unit), clock, dir.path, `p${peers++}`);
  return {
    store: open(),
    openPeer: open,
    clock,
    unit,
    advance: async (ms) => clock.advance(ms),
    cleanup: async () => {
      await s.drop();
      dir.remove();
    },
  };
};

// Every facet through the decorator: its facets are assigned by the facet list, so a facet it did not
// wrap would be missing here.
everyFacetContract('fail-open over redis', { peers: true, sweepsOnClock: false }, overRedis);
everyFacetContract('fail-open over postgres', { peers: true, sweepsOnClock: true }, overPostgres);
rulesContract('fail-open over postgres', overPostgres);

test('a data error on the shared store fails that request alone: the replica does not fail open', async () => {
  const fx = await overPostgres(manualClock());
  try {
    // Postgres refuses NUL in text (SQLSTATE 22021): this request's own fault, not an outage.
    await assert.rejects(
      fx.store.incidents.decide({ tenant: 't', key: 'pd:bad\u0000key', fingerprint: 'MAJOR|0', ttlMs: 60_000 }),
      /0x00|invalid byte sequence/,
    );
    await fx.store.ping();
    const r = await fx.store.incidents.decide({ tenant: 't', key: 'pd:good', fingerprint: 'MAJOR|0', ttlMs: 60_000 });
    assert.equal(r.provisional, undefined, 'decided on the shared store, not in the journal');
  } finally {
    await fx.store.close();
    await fx.cleanup();
  }
});
