// needs: redis
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import fc from 'fast-check';
import { manualClock } from '../../src/core/clock.js';
import type { DedupStore } from '../../src/store/contract/index.js';
import { MemoryStore } from '../../src/store/memory/memory-store.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { tempDir } from '../helpers/tmp.js';
import { startRedis } from '../helpers/redis.js';
import { redisConnection } from '../../src/store/redis/connection.js';
import { RedisStore } from '../../src/store/redis/redis-store.js';
import { testSeed } from '../helpers/seed.js';

/**
 * A small reference model of seed 002, written separately from the code under
 * test (a list of applied identities and their times, not maps of markers).
 */
class Model {
  applied: Array<{ id: string; at: number }> = [];
  devices = new Map<string, { boot: string; seq: number; state: string; boots: string[] }>();
  notifications = 0;
  counts = { received: 0, applied: 0, duplicate: 0, stale_sequence: 0, stale_boot: 0 };

  step(now: number, retention: number, device: string, boot: string, seq: number, state: string) {
    this.counts.received++;
    const id = [device, boot, seq].join('/');
    if (this.applied.some((a) => a.id === id && now - a.at < retention)) {
      this.counts.duplicate++;
      return { outcome: 'duplicate' };
    }
    const d = this.devices.get(device);
    let gap = null;
    if (d && d.boot === boot && seq <= d.seq) {
      this.counts.stale_sequence++;
      return { outcome: 'rejected', reason: 'stale_sequence' };
    }
    if (d && d.boot !== boot && d.boots.includes(boot)) {
      this.counts.stale_boot++;
      return { outcome: 'rejected', reason: 'stale_boot' };
    }
    if (d && d.boot === boot && seq > d.seq + 1) gap = { from: d.seq + 1, to: seq - 1 };
    const transition = d && d.state !== state ? { from: d.state, to: state } : null;
    if (transition) this.notifications++;
    this.devices.set(device, { boot, seq, state, boots: [...(d?.boots ?? []), boot] });
    this.applied.push({ id, at: now });
    this.counts.applied++;
    return { outcome: 'applied', gap, transition };
  }
}

const RETENTION = 10_000;
const command = fc.oneof(
  { weight: 6, arbitrary: fc.record({ kind: fc.constant('event' as const), device: fc.nat(1), boot: fc.nat(2), seq: fc.nat(12), state: fc.nat(2) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('advance' as const), ms: fc.nat(RETENTION * 1.5) }) },
);

async function check(
  open: (clock: ReturnType<typeof manualClock>) => { store: DedupStore; done: () => void | Promise<void>; tenant?: string },
  runs: number,
  retention = RETENTION,
  /** false: the store's clock cannot be moved, so clock moves are left out of the histories */
  movableClock = true,
) {
  await fc.assert(
    fc.asyncProperty(fc.array(command, { maxLength: 60 }), async (cmds) => {
      const clock = manualClock();
      const { store, done, tenant = 't' } = open(clock);
      const model = new Model();
      const counts = { received: 0, applied: 0, duplicate: 0, rejected: 0 };
      try {
        for (const c of cmds) {
          if (c.kind === 'advance') {
            if (movableClock) clock.advance(c.ms);
            continue;
          }
          const e = { tenant, device: `d${c.device}`, boot: `b${c.boot}`, sequence: c.seq, state: `s${c.state}`, observedAt: clock.now() };
          const got = await store.devices.apply(e, retention);
          const want = model.step(clock.now(), retention, e.device, e.boot, e.sequence, e.state);
          assert.deepEqual(
            {
              outcome: got.outcome,
              ...(got.reason ? { reason: got.reason } : {}),
              ...(got.outcome === 'applied' ? { gap: got.gap, transition: got.transition } : {}),
            },
            want,
          );
          counts.received++;
          counts[got.outcome === 'rejected' ? 'rejected' : got.outcome]++;
        }
        for (const [device, m] of model.devices) {
          const d = await store.devices.get(tenant, device);
          assert.deepEqual(d && [d.boot, d.sequence, d.state], [m.boot, m.seq, m.state]);
        }
        assert.equal((await store.queries.listOutbox()).filter((n) => n.tenant === tenant && n.kind === 'event').length, model.notifications);
        // The store's answers, counted, against the model's: each bucket on its own (their sum equals received by construction).
        const m = model.counts;
        assert.deepEqual(counts, { received: m.received, applied: m.applied, duplicate: m.duplicate, rejected: m.stale_sequence + m.stale_boot });
      } finally {
        await store.close();
        await done();
      }
    }),
    { numRuns: runs, seed: testSeed('integration/events-model') },
  );
}

test('events on memory match the reference model (300 random histories)', async () => {
  await check((clock) => ({ store: new MemoryStore(clock), done: () => {} }), 300);
});

test('events on SQLite match the reference model (60 random histories)', async () => {
  await check((clock) => {
    const dir = tempDir();
    return { store: new SqliteStore(join(dir.path, 's.db'), clock), done: dir.remove };
  }, 60);
});

// Redis decides on its own clock: the model's clock moves only when the test
// sleeps, so this run has no "advance" commands and a retention longer than it
// lasts; each history gets a tenant of its own on one private redis-server.
test('events on Redis match the reference model (40 random histories, no clock moves)', async () => {
  const redis = await startRedis();
  let run = 0;
  try {
    await check(
      (_clock) => ({
        store: new RedisStore(redisConnection(redis.url)),
        tenant: `t${++run}`,
        done: () => {},
      }),
      40,
      3_600_000,
      false,
    );
  } finally {
    await redis.stop();
  }
});
