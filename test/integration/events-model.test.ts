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

type Command = typeof command extends fc.Arbitrary<infer C> ? C : never;

/**
 * For histories that cross the retention on a store whose clock only sleeps
 * can move: few identities, so an event is often sent again after a move.
 */
const crossing = fc.oneof(
  { weight: 6, arbitrary: fc.record({ kind: fc.constant('event' as const), device: fc.nat(1), boot: fc.nat(1), seq: fc.nat(3), state: fc.nat(2) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('advance' as const), ms: fc.constant(0) }) },
);

async function check(
  open: (clock: ReturnType<typeof manualClock>) => { store: DedupStore; done: () => void | Promise<void>; tenant?: string },
  runs: number,
  retention = RETENTION,
  /**
   * How the store's clock moves. `manual`: with the test's clock. `sleeps`: the
   * store keeps its own (Redis), so a move is a real sleep past the retention,
   * at most `max` a history, and the model's clock jumps by exactly the
   * retention; between moves the model's clock stands still, which holds as
   * long as a stretch of commands takes far less than the retention.
   */
  clockMoves: { kind: 'manual' } | { kind: 'sleeps'; sleepMs: number; max: number } = { kind: 'manual' },
  commands: fc.Arbitrary<Command> = command,
  lengths: { minLength?: number; maxLength: number } = { maxLength: 60 },
) {
  await fc.assert(
    fc.asyncProperty(fc.array(commands, lengths), async (cmds) => {
      const clock = manualClock();
      const { store, done, tenant = 't' } = open(clock);
      const model = new Model();
      const counts = { received: 0, applied: 0, duplicate: 0, rejected: 0 };
      let moves = 0;
      try {
        for (const c of cmds) {
          if (c.kind === 'advance') {
            if (clockMoves.kind === 'manual') clock.advance(c.ms);
            else if (moves++ < clockMoves.max) {
              await new Promise((r) => setTimeout(r, clockMoves.sleepMs));
              clock.advance(retention);
            }
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

// Planted fault it catches: a seen-marker kept past the retention (PX ten times too long).
// Redis decides on its own clock and keeps seen-markers by its own expiry, so
// its clock moves only when the test sleeps: each history gets a tenant of its
// own on one private redis-server. The first run has no clock moves and a
// retention longer than it lasts; the second crosses the retention: up to two
// sleeps of 1.8 s a history past a retention of 1.5 s, each a jump of exactly
// the retention for the model (a stretch of 60 commands between sleeps takes
// milliseconds, far inside the retention, so the model's standing clock holds).
test('events on Redis match the reference model (40 random histories without clock moves, 8 crossing the retention)', async () => {
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
      { kind: 'sleeps', sleepMs: 0, max: 0 },
    );
    await check(
      (_clock) => ({
        store: new RedisStore(redisConnection(redis.url)),
        tenant: `crossing-${++run}`,
        done: () => {},
      }),
      8,
      1500,
      { kind: 'sleeps', sleepMs: 1800, max: 2 },
      crossing,
      { minLength: 40, maxLength: 60 },
    );
  } finally {
    await redis.stop();
  }
});
