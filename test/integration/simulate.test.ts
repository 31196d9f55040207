// needs: postgres
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { inProcessServer, type InProcessServer } from '../helpers/server.js';
import { until } from '../helpers/wait.js';
import { startSink } from '../fakes/http-fake.js';
import type { FakeServer } from '../fakes/http-fake.js';
import { simulate, type SimulationReport } from '../../src/simulate/simulate.js';
import type { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import pg from 'pg';
import { freshSchema, PG_URL } from '../helpers/postgres.js';
import { parseConfig } from '../../src/config/load.js';
import { openStore } from '../../src/store/open.js';
import { systemClock } from '../../src/core/clock.js';

/**
 * `simulate` against a recorded day, on SQLite and Postgres (the test's clock
 * is theirs): a real server decides and delivers 500
 * keys' arrivals over 22 hours (creates, repeats, changes, closes, a
 * re-create, a silence made during the day), then the day is replayed from
 * the store's histories. With the config the day ran on, every key's
 * outcome is what happened; with a candidate that adds a route and a
 * silence, exactly the keys they touch differ, each with its first
 * difference.
 */

const KEYS = 500;
const STEP_MS = 30 * 60_000;
const TEAMS = ['net', 'db', 'edge', 'core'] as const;
/** The silence over core keys lasts from step 4 to a quarter of an hour before this step. */
const SILENCE_ENDS_BEFORE = 10;
const teamOf = (i: number) => TEAMS[i % TEAMS.length]!;

const current = (hook: string) => `
incidents: { race_window_ms: 0, ttl_seconds: 7200 }
adapters:
  - { name: hook, type: webhook, url: "${hook}/hook" }
  - { name: pager, type: webhook, url: "${hook}/pager" }
route: { receiver: hook }
`;
// The candidate: db keys page instead; a silence (--silence) mutes edge keys.
const candidate = (hook: string) => `${current(hook).replace('route: { receiver: hook }', '')}
route:
  receiver: hook
  routes:
    - { receiver: pager, matchers: ['team="db"'] }
`;

const incident = (i: number, over: Record<string, unknown> = {}) => ({
  element_id: `olt-${i}`,
  fault_class: 'LOS',
  root_cause_id: `cut-${i}`,
  severity: 'MAJOR',
  summary: `OLT ${i} lost signal`,
  labels: { team: teamOf(i) },
  ...over,
});

/** What key i does at each step of the day (step 0 is the day's start). */
function plan(i: number): Map<number, 'arrive' | 'change' | 'close'> {
  const p = new Map<number, 'arrive' | 'change' | 'close'>();
  const s = i % 10;
  p.set(s, 'arrive');
  p.set(s + 1, 'arrive');
  p.set(s + 2, 'arrive');
  if (i % 3 === 0) p.set(s + 3, 'change');
  if (i % 2 === 0) p.set(s + 5, 'close');
  // After the close, or past the TTL (2 h = 4 steps) with no arrival: the next arrival is a new CREATE.
  if (i % 5 === 0) p.set(s + 12, 'arrive');
  return p;
}

/** Deliveries not yet settled: in the outbox, leased, or pending and neither held (not yet due) nor behind a held one. */
const UNSETTLED = `
  SELECT (SELECT count(*) FROM outbox) + (SELECT count(*) FROM deliveries d WHERE d.status = 'pending' AND NOT (
    d.lease = '' AND d.held = 1 AND d.due_at > @now OR
    d.lease = '' AND d.held = 0 AND EXISTS (SELECT 1 FROM deliveries h WHERE h.status = 'pending' AND h.lease = '' AND h.held = 1
      AND h.due_at > @now AND h.adapter = d.adapter AND h.tenant = d.tenant AND h.kind = d.kind AND h.key = d.key))) AS n`;

// Postgres and SQLite keep their time from the server's clock, which the test moves; Redis keeps TTLs,
// silences' retention and a held delivery's next look on its own, which no test clock moves.
for (const backend of ['sqlite', 'postgres'] as const)
  describe(`onceonly simulate against a recorded day on ${backend}`, () => {
    let pgSchema: Awaited<ReturnType<typeof freshSchema>> | undefined;
    let pgClient: pg.Client | undefined;
    let hook: FakeServer;
    let s: InProcessServer;
    let storeUrl: string;
    const keys: string[] = [];
    const plans = Array.from({ length: KEYS }, (_, i) => plan(i));
    /** keys that come back after their close or expiry: a second create */
    const comesBack = (i: number) => plans[i]!.has((i % 10) + 12);
    before(async () => {
      hook = await startSink(200, {});
      if (backend === 'postgres') {
        pgSchema = await freshSchema();
        storeUrl = `${PG_URL}?schema=${pgSchema.schema}`;
        pgClient = new pg.Client({ connectionString: PG_URL });
        await pgClient.connect();
        await pgClient.query(`SET search_path TO "${pgSchema.schema}"`);
      }
      s = await inProcessServer({ ...(pgSchema ? { store: storeUrl } : {}), config: current(hook.url), clockStart: Date.now() - 23 * 3_600_000 });
      if (!pgSchema) storeUrl = `sqlite:${s.dir}/onceonly.db`;
      const steps = Math.max(...plans.flatMap((p) => [...p.keys()])) + 1;
      // Every change delivered, or held by the silence with what waits behind it, and nothing in flight: read
      // from the store itself, not guessed from quiet (a loaded machine's worker can be slow to lease, and a
      // create leased only after the next jump would miss the silence it met here).
      const unsettled = async (): Promise<number> => {
        if (pgClient) return Number((await pgClient.query(UNSETTLED.replaceAll('@now', '$1'), [s.clock.now()])).rows[0].n);
        return ((s.store as SqliteStore).database.prepare(UNSETTLED).get({ now: s.clock.now() }) as { n: number }).n;
      };
      const settled = (what: string) =>
        until(
          async () => (await unsettled()) === 0,
          30_000,
          () => `${what} settling`,
        );
      for (let step = 0; step < steps; step++) {
        // The clock moves in two jumps: what falls due between steps (a release at a silence's end) goes
        // out in the first, before the step's arrivals, as it would on a clock that runs.
        if (step > 0) {
          s.clock.advance(STEP_MS - 60_000);
          await settled(`before step ${step}`);
          s.clock.advance(60_000);
        }
        // A silence made during the day, over core keys for three hours: the replay mutes with it as it was.
        if (step === SILENCE_ENDS_BEFORE - 6) {
          const r = await s.post('/api/v2/silences', {
            matchers: [{ name: 'team', value: 'core', isRegex: false, isEqual: true }],
            startsAt: new Date(s.clock.now()).toISOString(),
            endsAt: new Date(s.clock.now() + 3 * 3_600_000 - 15 * 60_000).toISOString(),
            createdBy: 'alice',
            comment: 'core maintenance',
          });
          assert.equal(r.status, 200, JSON.stringify(r.body));
        }
        for (let i = 0; i < KEYS; i++) {
          const what = plans[i]!.get(step);
          if (what === undefined) continue;
          if (what === 'close') {
            const r = await s.del(`/v1/incidents/${encodeURIComponent(keys[i]!)}`);
            assert.equal(r.status, 204, JSON.stringify(r.body));
            continue;
          }
          const r = await s.post('/v1/incidents', incident(i, what === 'change' ? { severity: 'CRITICAL' } : {}));
          assert.equal(r.status, 200, JSON.stringify(r.body));
          keys[i] = r.body.dedup_key;
        }
        await settled(`step ${step}`);
      }
      // Nothing left to go: every change the day made reached the receiver (or was muted and released).
      const left = await s.store.deliveries.backlog();
      assert.deepEqual([left.pending, left.dead], [0, 0], 'every delivery of the day settled');
      await s.close();
    });
    after(async () => {
      await s?.stop();
      await hook?.close();
      await pgClient?.end();
      await pgSchema?.drop();
    });

    const run = async (configText: string, extra: Partial<Parameters<typeof simulate>[0]> = {}): Promise<SimulationReport> => {
      const source = openStore(storeUrl, systemClock);
      await source.init?.();
      try {
        return await simulate({ source, config: parseConfig(configText, 'candidate.yaml'), since: Date.now() - 24 * 3_600_000, ...extra });
      } finally {
        await source.close();
      }
    };

    test('with the config the day ran on, every key replays to what happened', async () => {
      const r = await run(current(hook.url));
      assert.equal(r.keys.replayed, KEYS);
      assert.deepEqual(r.differences, [], JSON.stringify(r.differences.slice(0, 3)));
      assert.deepEqual(r.approximate, []);
      const sent = (path: string) => new Set(hook.requests.filter((q) => q.path === path).map((q) => q.headers['idempotency-key'])).size;
      // What the receiver got is what the history says was sent, and the replay agrees (each delivery once by
      // its idempotency key: a loaded machine may time a call out and make it again).
      const h = r.adapters.hook!;
      assert.deepEqual(h.recorded, h.candidate);
      assert.equal(h.recorded.created, KEYS + keys.filter((_, i) => comesBack(i)).length);
      assert.equal(h.recorded.closed, KEYS / 2);
      assert.ok(h.recorded.updated > 0 && h.recorded.muted > 0, JSON.stringify(h.recorded));
      assert.equal(sent('/hook'), h.recorded.created + h.recorded.updated + h.recorded.closed);
      assert.deepEqual(r.adapters.pager, {
        recorded: { created: 0, updated: 0, closed: 0, muted: 0 },
        candidate: { created: 0, updated: 0, closed: 0, muted: 0 },
      });
    });

    test('a candidate whose pager route groups by team: the pager gets groups, the db keys no ticket of their own', async () => {
      const grouped = candidate(hook.url).replace(
        '    - { receiver: pager, matchers: [\'team="db"\'] }',
        '    - { receiver: pager, matchers: [\'team="db"\'], group_by: [team], group_wait: 1m, group_interval: 5m }',
      );
      assert.notEqual(grouped, candidate(hook.url), 'the candidate has the grouping route');
      const r = await run(grouped);
      const db = (i: number) => teamOf(i) === 'db';
      const dbCreates = keys.filter((_, i) => db(i)).length + keys.filter((_, i) => db(i) && comesBack(i)).length;
      assert.ok(dbCreates >= 20, `${dbCreates} db creates in the day`);
      // The db keys' creates leave the NOC's hook, and reach the pager as its team's group: a create each
      // time the group opens (it lives while a db key does), far fewer than the keys.
      assert.equal(r.adapters.hook!.candidate.created, r.adapters.hook!.recorded.created - dbCreates);
      const pager = r.adapters.pager!.candidate;
      assert.ok(pager.created >= 1 && pager.created * 10 <= dbCreates, `pager: ${JSON.stringify(pager)} for ${dbCreates} db creates`);
      assert.ok(pager.updated >= 1, 'members joining and leaving update the group');
    });

    test('a candidate with a route and a silence more: exactly the keys they touch differ, each with its first difference', async () => {
      const r = await run(candidate(hook.url), { silence: [{ name: 'team', value: 'edge', isRegex: false, isEqual: true }] });
      const expected = keys.filter((_, i) => teamOf(i) === 'db' || teamOf(i) === 'edge').sort();
      assert.deepEqual(r.differences.map((d) => d.key).sort(), expected);
      const byKey = new Map(r.differences.map((d) => [d.key, d]));
      const paged = byKey.get(keys[1]!)!;
      assert.equal(paged.first, 'routed to hook, now routed to pager');
      assert.equal(paged.about, 'olt-1 · LOS');
      const edge = byKey.get(keys[2]!)!;
      assert.match(edge.first, /^hook: 1st change was create, now create muted by silence /);
      // db keys' tickets move to the pager; edge keys' creates are muted.
      const db = (i: number) => teamOf(i) === 'db';
      assert.equal(r.adapters.pager!.candidate.created, keys.filter((_, i) => db(i)).length + keys.filter((_, i) => db(i) && comesBack(i)).length);
      assert.ok(r.adapters.hook!.candidate.muted > r.adapters.hook!.recorded.muted);
    });
  });
