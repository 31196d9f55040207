// needs: postgres
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { manualClock } from '../../src/core/clock.js';
import { decideFromOutcome } from '../../src/core/decision.js';
import type { DeviceEvent } from '../../src/core/event.js';
import type { DedupStore, Delivery, Ledger } from '../../src/store/contract/index.js';
import { MemoryStore } from '../../src/store/memory/memory-store.js';
import { PgStore } from '../../src/store/postgres/pg-store.js';
import { openPool } from '../../src/store/postgres/pool.js';
import { freshSchema, PG_URL } from '../helpers/postgres.js';
import { seededRandom } from '../helpers/seed.js';

/**
 * Postgres decides in server-side functions (PL/pgSQL); every other backend
 * applies the TypeScript rules. This drives both with the same seeded random
 * operations on the same clock and asks for the same answers, the same
 * records, the same outbox entries and, in ledger mode, audit rows that say
 * what decideFromOutcome says of each answer. A rule changed on one side only
 * fails here.
 */

const GRACE = 5_000;
const RACE_MS = 1_500;
const OPS = 3_000;
const RETENTION = 2_000;
const WINDOW = 2_000;

const outboxOf = async (s: DedupStore): Promise<string[]> => {
  while ((await s.deliveries.fanOut(['hook'], 1000)) > 0);
  const got: Delivery[] = await s.deliveries.leaseDue('w', 60_000, 100_000);
  for (const d of got) await s.deliveries.settle(d, { outcome: 'delivered' });
  return got
    .map((d) => JSON.stringify([d.entry.tenant, d.entry.kind, d.entry.action, d.entry.key, d.entry.severity, d.entry.summary, d.entry.data, d.n]))
    .sort();
};

test('postgres functions and the TypeScript rules decide alike: incidents (claim, close, acknowledge), device events, windows, outbox and audit', async () => {
  const seed = Number(process.env.SEED ?? 20261201);
  const pick = seededRandom(seed);
  const one = <T>(xs: readonly T[]): T => xs[Math.floor(pick() * xs.length)]!;
  const clock = manualClock(1_700_000_000_000);
  const s = await freshSchema();
  const ledger: Ledger = { inputs: () => ({ incidents: true, events: true, violations: true }), raceWindowMs: () => RACE_MS, replica: 'model:1' };
  const pg = new PgStore(openPool(PG_URL, s.schema, 4), clock, { expiredGraceMs: GRACE, ledger });
  const audit = openPool(PG_URL, s.schema, 1);
  const mem = new MemoryStore(clock, GRACE);
  const keys = ['k1', 'k2', 'k3', 'k4'];
  const fps = ['MAJOR|0', 'MAJOR|1', 'CRITICAL|0', 'MINOR|1'];
  const devices = ['d1', 'd2'];
  const boots = ['b1', 'b2', 'b3'];
  const states = ['RUNNING', 'STOPPED', 'IDLE'];
  const expected: string[] = [];
  const sent = new Map<string, { boot: string; sequence: number; event?: DeviceEvent }>();
  const applyBoth = async (e: DeviceEvent, i: number) => {
    const [a, b] = [await mem.devices.apply(e, RETENTION), await pg.devices.apply(e, RETENTION)];
    assert.deepEqual(b, a, `op ${i} (seed ${seed}): event ${JSON.stringify(e)}`);
    assert.deepEqual(await pg.devices.get(e.tenant, e.device), await mem.devices.get(e.tenant, e.device), `op ${i}: device state`);
    expected.push(`events ${e.device}/${e.boot}/${e.sequence} ${a.outcome} ${a.reason ?? ''}`);
    if (a.gap) seen.gaps++;
    if (a.reason === 'stale_boot') seen.staleBoot++;
    if (a.reason === 'stale_sequence') seen.staleSeq++;
    if (a.outcome === 'duplicate') seen.duplicate++;
  };
  const seen = {
    stale: 0,
    expired: 0,
    lostRace: 0,
    cleared: 0,
    reopened: 0,
    gaps: 0,
    staleBoot: 0,
    staleSeq: 0,
    duplicate: 0,
    requeued: 0,
    acknowledged: 0,
    repeat: 0,
    absent: 0,
  };
  try {
    for (let i = 0; i < OPS; i++) {
      const r = pick();
      const tenant = one(['t1', 't2']);
      if (r < 0.45) {
        const key = one(keys);
        const episode = pick() < 0.3 ? clock.now() - Math.floor(pick() * 4_000) : undefined;
        const claim = {
          tenant,
          key,
          fingerprint: one(fps),
          ttlMs: one([1_000, 3_000, 10_000]),
          outbox: pick() < 0.9 ? { severity: 'MAJOR', summary: `s${i}`, data: { i, nested: { why: 'model' } } } : undefined,
          ...(episode === undefined ? {} : { episodeStartedAt: episode }),
        };
        const [a, b] = [await mem.incidents.decide(claim), await pg.incidents.decide(claim)];
        assert.deepEqual(b, a, `op ${i} (seed ${seed}): decide ${JSON.stringify(claim)}`);
        const d = decideFromOutcome(a.outcome, RACE_MS);
        expected.push(`incidents ${key} ${d.decision} ${d.reason}`);
        if (d.reason === 'stale') seen.stale++;
        if (d.reason === 'expired') seen.expired++;
        if (d.reason === 'lost_race') seen.lostRace++;
        if (d.reason === 'cleared') seen.cleared++;
        if (d.reason === 'reopened') seen.reopened++;
      } else if (r < 0.55) {
        const key = one(keys);
        const resolvedAt = pick() < 0.5 ? clock.now() : undefined;
        const closed = await mem.incidents.close(tenant, key, resolvedAt);
        assert.deepEqual(await pg.incidents.close(tenant, key, resolvedAt), closed, `op ${i}: close`);
        expected.push(`incidents ${key} ${closed ? 'CLOSE closed' : 'NONE not_live'}`);
      } else if (r < 0.6) {
        const key = one(keys);
        const acked = await mem.incidents.acknowledge(tenant, key);
        assert.equal(await pg.incidents.acknowledge(tenant, key), acked, `op ${i}: acknowledge`);
        if (acked === 'acknowledged') expected.push(`incidents ${key} UPDATE acknowledged`);
        seen[acked]++;
      } else if (r < 0.82) {
        const device = one(devices);
        // A producer: retries, next sequences, jumps, late arrivals and reboots.
        const last = sent.get(`${tenant}/${device}`) ?? { boot: 'b1', sequence: 0 };
        const q = pick();
        const [boot, sequence] =
          q < 0.25
            ? [last.boot, last.sequence]
            : q < 0.65
              ? [last.boot, last.sequence + 1]
              : q < 0.75
                ? [last.boot, last.sequence + 2 + Math.floor(pick() * 3)]
                : q < 0.87
                  ? [last.boot, Math.max(1, last.sequence - 1 - Math.floor(pick() * 3))]
                  : [one(boots), 1];
        const e = { tenant, device, boot, sequence, state: one(states), observedAt: clock.now() - 10 };
        sent.set(`${tenant}/${device}`, { boot, sequence: Math.max(sequence, boot === last.boot ? last.sequence : 0) });
        const next = sent.get(`${tenant}/${device}`)!;
        next.event = e;
        await applyBoth(e, i);
      } else if (r < 0.85) {
        // The same event again exactly when its seen-marker lapses: the retention's boundary.
        const e = sent.get(`${tenant}/${one(devices)}`)?.event;
        if (e) {
          await applyBoth(e, i);
          clock.advance(RETENTION);
          await applyBoth(e, i);
        }
      } else if (r < 0.95) {
        const key = one(keys);
        const outbox = pick() < 0.9 ? { severity: 'MINOR', summary: `v${i}`, data: { i } } : undefined;
        const claimBoth = async () => {
          const [a, b] = [await mem.windows.claim(tenant, key, WINDOW, outbox), await pg.windows.claim(tenant, key, WINDOW, outbox)];
          assert.equal(b, a, `op ${i} (seed ${seed}): window ${tenant}/${key}`);
          expected.push(`violations ${key} ${a === 'repeat' ? 'SUPPRESS' : 'CREATE'} ${a}`);
          if (a === 'requeued') seen.requeued++;
        };
        await claimBoth();
        // Sometimes the repeat lands exactly when the window ends.
        if (pick() < 0.3) {
          clock.advance(WINDOW);
          await claimBoth();
        }
      } else {
        // Deliver, sometimes failing, so that re-fires have failing deliveries to re-queue.
        for (const st of [mem, pg] as DedupStore[]) {
          while ((await st.deliveries.fanOut(['hook'], 1000)) > 0);
          for (const d of await st.deliveries.leaseDue('w', 60_000, 100_000)) {
            await st.deliveries.settle(d, d.n % 3 === 0 ? { outcome: 'dead', error: 'refused' } : { outcome: 'delivered' });
          }
        }
      }
      for (const k of keys) assert.deepEqual(await pg.incidents.get(tenant, k), await mem.incidents.get(tenant, k), `op ${i}: record ${tenant}/${k}`);
      if (i % 250 === 0) assert.deepEqual(await outboxOf(pg), await outboxOf(mem), `op ${i}: outbox`);
      // In steps of 100 ms, so that times land exactly on TTL, grace and race-window boundaries too.
      clock.advance(100 * Math.floor(pick() * 8));
    }
    assert.deepEqual(await outboxOf(pg), await outboxOf(mem), 'outbox at the end');
    const rows = (
      await audit.query<{ kind: string; key: string; decision: string; reason: string }>('SELECT kind, key, decision, reason FROM audit ORDER BY id')
    ).rows;
    assert.deepEqual(
      rows.map((x) => `${x.kind} ${x.key} ${x.decision} ${x.reason}`.trimEnd()),
      expected.map((x) => x.trimEnd()),
      'one audit row per decision, saying what decideFromOutcome says',
    );
    // The walk must reach every branch, or agreement proves less than it claims.
    for (const [branch, n] of Object.entries(seen)) assert.ok(n > 0, `the random walk never reached ${branch}: ${JSON.stringify(seen)}`);
    console.log(`seed ${seed}: ${OPS} operations, branches reached ${JSON.stringify(seen)}`);
  } finally {
    await pg.close();
    await audit.end();
    await s.drop();
  }
});
