import { describe, test, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { manualClock, type ManualClock } from '../../src/core/clock.js';
import { decideFromOutcome } from '../../src/core/decision.js';
import type { DedupStore, EscalationStep, IncidentClaim, SharedIncidentStore } from '../../src/store/contract/index.js';

export interface StoreFixture {
  store: DedupStore;
  /** Moves the store's clock: a manual clock advances, a server clock is waited for. */
  advance(ms: number): Promise<void>;
  /** One time unit for TTL tests: large on a manual clock, small (real sleeps) on a server clock. */
  unit: number;
  /** Set when the store runs on the test's manual clock: exact timestamps can be asserted. */
  clock?: ManualClock;
  /**
   * Set when the store keeps its own clock (Redis's TIME): its time now, so a
   * timestamp can be asserted to lie between readings taken around the call.
   */
  serverNow?: () => Promise<number>;
  /**
   * Set when the store deletes expired records itself (Redis's PXAT) rather
   * than by sweepExpired: whether it still holds a key's record at all.
   */
  holds?: (tenant: string, key: string) => Promise<boolean>;
  /** A second handle on the same data (another connection), when the backend has one. */
  openPeer?: () => DedupStore | Promise<DedupStore>;
  cleanup: () => Promise<void> | void;
}

/**
 * Stores are opened with an expired-record grace of GRACE_UNITS × unit. On
 * Redis time is real (100 ms units) and a case reaches into the grace after
 * an expiry through a few round trips and redis-cli calls: 5 units left 400
 * ms for them, which a CI machine with its cores kept busy overran.
 */
export const GRACE_UNITS = 8;

let seq = 0;
/** A fresh key per test, so stores that outlive one test (a shared Redis) never see stale state. */
const freshKey = () =>
  `dedup:${process.pid.toString(16).padStart(8, '0')}${(Date.now() % 1e9).toString(16).padStart(12, '0')}${(++seq).toString(16).padStart(12, '0')}`;

/**
 * The one contract every DedupStore backend must meet. Each backend's test
 * file calls this with a factory; backend-only cases live beside it.
 */
export interface BackendTraits {
  /** Whether the fixture offers openPeer. */
  peers: boolean;
  /** Whether its incidents replay fail-open journal entries (a shared store: SharedIncidentStore). */
  replays?: boolean;
}

/** Asserts `at` was taken by the store between two readings of its clock. */
async function between(fx: StoreFixture, before: number, at: number, what: string) {
  const after = await fx.serverNow!();
  assert.ok(before <= at && at <= after, `${what}: ${at} is not between ${before} and ${after}, the store's clock around the call`);
}

export function incidentStoreContract(backend: string, traits: BackendTraits, open: (clock: ManualClock) => StoreFixture | Promise<StoreFixture>) {
  // Traits decide skips when tests are declared: a test skipped from inside its
  // body would not run afterEach, and would leak the store it opened.
  describe(`DedupStore contract: incidents on ${backend}`, () => {
    let fx: StoreFixture;
    let key: string;
    let T: number;
    const claim = (over: Partial<IncidentClaim> = {}): IncidentClaim => ({
      tenant: 'default',
      key,
      fingerprint: 'MAJOR|0',
      ttlMs: 60 * T,
      ...over,
    });
    const decide = async (c: Partial<IncidentClaim> = {}) => {
      const r = await fx.store.incidents.decide(claim(c));
      return { ...decideFromOutcome(r.outcome, 0), record: r.record };
    };

    beforeEach(async () => {
      fx = await open(manualClock());
      T = fx.unit;
      key = freshKey();
    });
    afterEach(async () => {
      await fx.store.close();
      await fx.cleanup();
    });

    test('a decision whose outbox payload cannot be written fails whole: nothing of it remains, and the store still serves', async () => {
      // A BigInt cannot be written as JSON: the payload fails after (SQL) or before (memory, Redis) the record is written.
      const bad = { severity: 'MAJOR', summary: 's', data: { n: 1n } };
      await assert.rejects(fx.store.incidents.decide(claim({ outbox: bad })), TypeError);
      assert.equal(await fx.store.incidents.get('default', key), null, 'no record');
      assert.equal((await fx.store.queries.listOutbox()).filter((e) => e.key === key).length, 0, 'no outbox entry');
      await fx.store.ping();
      const next = await decide({ outbox: { severity: 'MAJOR', summary: 's', data: {} } });
      assert.equal(next.decision, 'CREATE', 'the retry is the first arrival, not a SUPPRESS against a half-written record');
    });

    test('lifecycle: CREATE → SUPPRESS → UPDATE(severity) → SUPPRESS → UPDATE(cleared) → close → CREATE', async () => {
      const first = await decide();
      assert.equal(first.decision, 'CREATE');
      assert.equal(first.reason, 'new');
      assert.equal((await decide()).decision, 'SUPPRESS');
      const up = await decide({ fingerprint: 'CRITICAL|0' });
      assert.deepEqual([up.decision, up.reason], ['UPDATE', 'severity']);
      assert.equal((await decide({ fingerprint: 'CRITICAL|0' })).decision, 'SUPPRESS');
      const cl = await decide({ fingerprint: 'CRITICAL|1' });
      assert.deepEqual([cl.decision, cl.reason], ['UPDATE', 'cleared']);
      const rec = await fx.store.incidents.get('default', key);
      assert.ok(rec);
      assert.equal(rec.key, key);
      assert.equal(rec.refires, 4);
      assert.equal(rec.updates, 2);
      assert.equal(rec.fingerprint, 'CRITICAL|1');
      assert.equal(rec.createdAt, first.record.createdAt);
      assert.ok(rec.lastSeenAt >= rec.createdAt);
      assert.equal(rec.expiresAt, rec.lastSeenAt + 60 * T);
      const closed = await fx.store.incidents.close('default', key);
      assert.equal(closed?.updates, 2);
      assert.equal(await fx.store.incidents.get('default', key), null);
      assert.equal(await fx.store.incidents.close('default', key), null);
      const again = await decide();
      assert.deepEqual([again.decision, again.reason], ['CREATE', 'new'], 'a closed incident is not a premature expiry');
      assert.equal(again.record.refires, 0);
    });

    test('the TTL slides with every arrival; expiry makes the next arrival CREATE/expired, and after the grace CREATE/new', async () => {
      const ttlMs = 10 * T;
      await decide({ ttlMs });
      await fx.advance(6 * T);
      assert.equal((await decide({ ttlMs })).decision, 'SUPPRESS');
      await fx.advance(6 * T); // 12 units after the CREATE: alive only because the TTL slid
      const slidAt = fx.serverNow ? await fx.serverNow() : 0;
      const slid = await decide({ ttlMs });
      assert.equal(slid.decision, 'SUPPRESS');
      if (fx.serverNow) await between(fx, slidAt, slid.record.expiresAt - ttlMs, 'the TTL slid from the arrival');
      await fx.advance(6 * T);
      const live = await fx.store.incidents.get('default', key);
      assert.ok(live, 'still live 6 units after the last arrival');
      assert.equal(live.refires, 2);
      if (fx.clock) assert.equal(live.expiresAt, fx.clock.now() + 4 * T);
      assert.equal(live.expiresAt, slid.record.expiresAt, 'a read does not move the expiry');
      await fx.advance(5 * T); // 11 units after the last arrival
      assert.equal(await fx.store.incidents.get('default', key), null);
      const reAt = fx.serverNow ? await fx.serverNow() : 0;
      const re = await decide({ ttlMs });
      assert.deepEqual([re.decision, re.reason], ['CREATE', 'expired']);
      assert.equal(re.record.refires, 0);
      if (fx.clock) assert.equal(re.record.createdAt, fx.clock.now());
      if (fx.serverNow) await between(fx, reAt, re.record.createdAt, 'createdAt is the time of the new episode');
      await fx.advance(ttlMs + GRACE_UNITS * T + T); // past expiry and the grace
      const fresh = await decide({ ttlMs });
      assert.deepEqual([fresh.decision, fresh.reason], ['CREATE', 'new']);
    });

    test('closing an expired incident answers not live', async () => {
      await decide({ ttlMs: 2 * T });
      await fx.advance(3 * T);
      assert.equal(await fx.store.incidents.close('default', key), null);
      assert.deepEqual([(await decide()).reason], ['new'], 'a close also clears the expired record');
    });

    test('acknowledge: once per episode, one update entry, never for a key that is not live', async () => {
      const acks = async () => (await fx.store.queries.listOutbox()).filter((e) => e.key === key && e.summary === 'acknowledged');
      assert.equal(await fx.store.incidents.acknowledge('default', key), 'absent');
      await decide({ fingerprint: 'CRITICAL|0' });
      assert.equal((await fx.store.incidents.get('default', key))?.acknowledged, undefined, 'not acknowledged yet');
      const r = await Promise.all(Array.from({ length: 20 }, () => fx.store.incidents.acknowledge('default', key)));
      assert.equal((await fx.store.incidents.get('default', key))?.acknowledged, true, 'get says so');
      assert.equal(r.filter((x) => x === 'acknowledged').length, 1);
      assert.equal(r.filter((x) => x === 'repeat').length, 19);
      const [entry] = await acks();
      assert.deepEqual([entry?.action, entry?.severity, entry?.data], ['update', 'CRITICAL', { fingerprint: 'CRITICAL|0', acknowledged: true }]);
      assert.equal(await fx.store.incidents.acknowledge('other', key), 'absent', 'tenants are separate');
      await fx.store.incidents.close('default', key);
      assert.equal(await fx.store.incidents.acknowledge('default', key), 'absent', 'closed');
      await fx.advance(T); // a new episode has a later createdAt
      await decide();
      assert.equal((await fx.store.incidents.get('default', key))?.acknowledged, undefined, "a new episode is not the old one's acknowledgement");
      assert.equal(await fx.store.incidents.acknowledge('default', key), 'acknowledged', 'a new episode');
      assert.equal((await fx.store.incidents.get('default', key))?.acknowledged, true);
      assert.equal((await acks()).length, 2);
    });

    test('episodes: a firing of an already resolved episode is stale and reopens nothing; a later episode is a CREATE', async () => {
      const t0 = Date.UTC(2026, 10, 30, 12, 0, 0);
      const created = (await fx.store.incidents.decide(claim({ episodeStartedAt: t0 }))).outcome.kind;
      assert.equal(created, 'created');
      assert.ok(await fx.store.incidents.close('default', key, t0 + 60_000));
      const entries = async () => (await fx.store.queries.listOutbox()).filter((e) => e.key === key).length;
      const before = await entries();
      assert.equal((await fx.store.incidents.decide(claim({ episodeStartedAt: t0 }))).outcome.kind, 'stale', "the HA peer's late firing");
      assert.equal(await fx.store.incidents.get('default', key), null, 'not reopened');
      assert.equal(await fx.store.incidents.close('default', key, t0 + 30_000), null, 'a resolved for a closed episode does nothing');
      assert.equal(
        (await fx.store.incidents.decide(claim({ episodeStartedAt: t0 + 60_000 }))).outcome.kind,
        'stale',
        'the earlier end did not replace the later one',
      );
      assert.equal(await entries(), before, 'no outbox entry for any of it');
      assert.equal((await fx.store.incidents.decide(claim({ episodeStartedAt: t0 + 60_001 }))).outcome.kind, 'created', 'a new episode');
      assert.equal(
        (await fx.store.incidents.decide(claim({ episodeStartedAt: t0 }))).outcome.kind,
        'stale',
        'the old episode stays closed even while a new one is live',
      );
      assert.equal((await fx.store.incidents.decide(claim())).outcome.kind, 'unchanged', 'claims without episodes ignore resolutions');
      assert.equal((await fx.store.incidents.decide(claim({ tenant: 'other', episodeStartedAt: t0 }))).outcome.kind, 'created', 'per tenant');
    });

    test("tenant in every key: one tenant's decision, resolution, acknowledgement and close never touch another tenant's same key", async () => {
      const t0 = Date.UTC(2026, 10, 30, 12, 0, 0);
      const [a, b] = ['tenant-a', 'tenant-b'];
      assert.equal((await fx.store.incidents.decide(claim({ tenant: a, episodeStartedAt: t0 }))).outcome.kind, 'created');
      assert.equal(
        (await fx.store.incidents.decide(claim({ tenant: b, episodeStartedAt: t0 }))).outcome.kind,
        'created',
        "the same key is another tenant's own",
      );
      assert.equal(await fx.store.incidents.acknowledge(a, key), 'acknowledged');
      assert.equal(await fx.store.incidents.acknowledge(b, key), 'acknowledged', "a's acknowledgement is not b's");
      assert.ok(await fx.store.incidents.close(a, key, t0 + 60_000));
      assert.notEqual(await fx.store.incidents.get(b, key), null, "a's close leaves b's key live");
      assert.equal((await fx.store.incidents.decide(claim({ tenant: b, episodeStartedAt: t0 }))).outcome.kind, 'unchanged', "a's resolution is not b's");
      assert.ok(await fx.store.incidents.close(b, key));
      assert.equal(
        (await fx.store.incidents.decide(claim({ tenant: b, episodeStartedAt: t0 + 1 }))).outcome.kind,
        'created',
        "b's episode after its own close is new: a's resolution at t0 + 60 s does not make it stale",
      );
      assert.equal((await fx.store.incidents.decide(claim({ tenant: a, episodeStartedAt: t0 + 1 }))).outcome.kind, 'stale', 'while a is held to its own');
    });

    test('list: live incidents of one tenant, most recently seen first', async () => {
      const tenant = `list-${key.slice(-12)}`;
      // `a` lives 10 units: on Redis a unit is real time (100 ms), and a loaded
      // machine took more than 2 units to make these calls.
      for (const [i, k] of ['a', 'b', 'c'].entries()) {
        await fx.store.incidents.decide({ tenant, key: `${key}-${k}`, fingerprint: 'MAJOR|0', ttlMs: (i === 0 ? 10 : 60) * T });
        await fx.advance(T / 10);
      }
      await fx.store.incidents.decide({ tenant: `${tenant}x`, key: `${key}-z`, fingerprint: 'MAJOR|0', ttlMs: 60 * T });
      assert.deepEqual(
        (await fx.store.queries.listIncidents(tenant, 10)).map((r) => r.key),
        [`${key}-c`, `${key}-b`, `${key}-a`],
      );
      assert.equal((await fx.store.queries.listIncidents(tenant, 2)).length, 2);
      await fx.advance(11 * T);
      assert.deepEqual(
        (await fx.store.queries.listIncidents(tenant, 10)).map((r) => r.key),
        [`${key}-c`, `${key}-b`],
        'expired ones are gone',
      );
    });

    test('tenants are separate key spaces', async () => {
      assert.equal((await decide({ tenant: 'a' })).decision, 'CREATE');
      assert.equal((await decide({ tenant: 'b' })).decision, 'CREATE');
      assert.ok(await fx.store.incidents.close('a', key));
      assert.ok(await fx.store.incidents.get('b', key));
      assert.equal(await fx.store.incidents.get('a', key), null);
    });

    // Planted fault it catches (Redis): a record kept long past its grace (PX ten times too long).
    test('live count and sweep: exact, on every backend', async () => {
      const keys = Array.from({ length: 5 }, () => freshKey());
      const ttls = [10, 11, 30, 40, 50];
      const before = await fx.store.queries.countLiveIncidents();
      for (const [i, k] of keys.entries()) await decide({ key: k, ttlMs: ttls[i]! * T });
      assert.equal(await fx.store.queries.countLiveIncidents(), before + 5);
      await fx.store.incidents.decide(claim({ key: keys[4]!, ttlMs: 50 * T, fingerprint: 'CRITICAL|0' }));
      assert.equal(await fx.store.queries.countLiveIncidents(), before + 5, 'an UPDATE is the same incident');
      await fx.advance(11.5 * T); // the first two expired, 1.5 and 0.5 units ago: inside the grace
      assert.equal(await fx.store.queries.countLiveIncidents(), before + 3, 'a record kept for the grace is not live');
      // Redis expires records itself (its sweep has nothing to do): there the record's presence is checked instead.
      const sweeps = !fx.holds;
      if (sweeps) assert.equal(await fx.store.sweepExpired(), 0, 'nothing is swept inside the grace');
      else assert.deepEqual([await fx.holds!('default', keys[0]!), await fx.holds!('default', keys[1]!)], [true, true], 'both kept for the grace');
      assert.ok(await fx.store.incidents.close('default', keys[2]!));
      assert.equal(await fx.store.queries.countLiveIncidents(), before + 2, 'a close ends it at once');
      assert.equal((await decide({ key: keys[0]!, ttlMs: 30 * T })).decision, 'CREATE');
      assert.equal(await fx.store.queries.countLiveIncidents(), before + 3, 'a re-create after an expiry is live again');
      await fx.advance(GRACE_UNITS * T);
      if (sweeps) {
        assert.equal(await fx.store.sweepExpired(), 1, 'the one still expired');
        assert.equal(await fx.store.sweepExpired(), 0);
      } else {
        assert.equal(await fx.holds!('default', keys[1]!), false, 'the one still expired is gone once its grace ended');
        assert.equal(await fx.holds!('default', keys[0]!), true, 'the re-created one is kept');
      }
      assert.equal(await fx.store.queries.countLiveIncidents(), before + 3);
    });

    test('200 concurrent identical claims make exactly one CREATE', async () => {
      const results = await Promise.all(Array.from({ length: 200 }, () => decide()));
      assert.equal(results.filter((r) => r.decision === 'CREATE').length, 1);
      assert.equal(results.filter((r) => r.decision === 'SUPPRESS').length, 199);
      assert.equal((await fx.store.incidents.get('default', key))?.refires, 199);
    });

    test('40 concurrent copies of one severity change make exactly one UPDATE', async () => {
      await decide();
      const results = await Promise.all(Array.from({ length: 40 }, () => decide({ fingerprint: 'CRITICAL|0' })));
      assert.equal(results.filter((r) => r.decision === 'UPDATE').length, 1);
      assert.equal(results.filter((r) => r.decision === 'SUPPRESS').length, 39);
    });

    const peerSkip = traits.peers ? false : `${backend} has no second handle on the same data`;
    test('the outbox gets exactly the CREATE, the UPDATEs and the close, never a SUPPRESS', async () => {
      const payload = (severity: string) => ({ severity, summary: `ring ${severity}`, data: { element_id: 'e', n: 1 } });
      await decide({ outbox: payload('MAJOR') });
      await decide({ outbox: payload('MAJOR') });
      await decide({ fingerprint: 'CRITICAL|0', outbox: payload('CRITICAL') });
      await decide({ fingerprint: 'CRITICAL|0', outbox: payload('CRITICAL') });
      await decide({ fingerprint: 'CRITICAL|1', outbox: payload('CRITICAL') });
      await fx.store.incidents.close('default', key);
      await decide({ outbox: payload('MAJOR') });
      await decide(); // no payload given: nothing to send even for a change
      const mine = (await fx.store.queries.listOutbox()).filter((e) => e.key === key);
      assert.deepEqual(
        mine.map((e) => [e.kind, e.action, e.severity, e.summary]),
        [
          ['incident', 'create', 'MAJOR', 'ring MAJOR'],
          ['incident', 'update', 'CRITICAL', 'ring CRITICAL'],
          ['incident', 'update', 'CRITICAL', 'ring CRITICAL'],
          ['incident', 'close', 'CRITICAL', ''],
          ['incident', 'create', 'MAJOR', 'ring MAJOR'],
        ],
      );
      assert.deepEqual(mine[0]!.data, { element_id: 'e', n: 1 });
      assert.deepEqual(mine[3]!.data, { fingerprint: 'CRITICAL|1' });
      assert.ok(mine.every((e) => e.tenant === 'default' && e.at > 0));
    });

    test('escalate: a step once per episode, only when due, never after an acknowledgement or a close; its adapters join the route', async () => {
      const created = (await decide({ fingerprint: 'CRITICAL|0', outbox: { severity: 'CRITICAL', summary: 'cut', data: {}, route: ['noc'] } })).record
        .createdAt;
      const step = (n: number, over: Partial<EscalationStep> = {}): EscalationStep => ({
        episode: created,
        step: n,
        dueAt: created,
        to: ['pager'],
        severity: 'CRITICAL',
        summary: 'cut',
        data: { element_id: 'e' },
        ...over,
      });
      const esc = (x: EscalationStep) => fx.store.incidents.escalate('default', key, x);
      const steps = async () => (await fx.store.queries.listOutbox()).filter((e) => e.key === key && e.data.escalation !== undefined);
      assert.equal(await esc(step(1, { dueAt: created + 1000 * T })), 'early', 'not due on the store clock');
      assert.equal(await esc(step(1, { episode: created + 1 })), 'absent', 'another episode');
      assert.equal(await fx.store.incidents.escalate('other', key, step(1)), 'absent', 'tenants are separate');
      assert.deepEqual(await steps(), [], 'none of that wrote anything');
      const r = await Promise.all(Array.from({ length: 10 }, () => esc(step(1))));
      assert.deepEqual([r.filter((x) => x === 'escalated').length, r.filter((x) => x === 'done').length], [1, 9], 'written once');
      const [first] = await steps();
      assert.deepEqual([first?.action, first?.route, first?.severity, first?.data], ['create', ['pager'], 'CRITICAL', { element_id: 'e', escalation: 1 }]);
      assert.deepEqual((await fx.store.incidents.get('default', key))?.route, ['noc', 'pager'], "the step's adapters join the route");
      assert.equal(await esc(step(2, { to: ['pager', 'duty'] })), 'escalated');
      assert.equal(await esc(step(1)), 'done', 'an earlier step after a later one');
      assert.deepEqual((await fx.store.incidents.get('default', key))?.route, ['noc', 'pager', 'duty']);
      assert.equal(await fx.store.incidents.acknowledge('default', key), 'acknowledged');
      assert.equal(await esc(step(3)), 'acknowledged', 'no step after the acknowledgement');
      assert.equal((await steps()).length, 2);
      await fx.store.incidents.close('default', key);
      assert.deepEqual(
        (await fx.store.queries.listOutbox()).filter((e) => e.key === key && e.action === 'close')[0]?.route,
        ['noc', 'pager', 'duty'],
        'the close reaches them',
      );
      assert.equal(await esc(step(3)), 'absent', 'no step after the close');
      await fx.advance(T); // a new episode has a later createdAt, and escalates from its own first step
      const next = (await decide({ outbox: { severity: 'MAJOR', summary: 'cut', data: {}, route: ['noc'] } })).record.createdAt;
      assert.equal(await esc(step(1, { episode: next, dueAt: next })), 'escalated');
      assert.equal((await steps()).length, 3);
    });

    test('a create keeps its route with the key: the updates, acknowledgement and close go there, whatever later claims say', async () => {
      const p = (severity: string, route?: string[]) => ({ severity, summary: '', data: {}, ...(route ? { route } : {}) });
      assert.deepEqual((await decide({ outbox: p('MAJOR', ['noc', 'pager']) })).record.route, ['noc', 'pager']);
      assert.deepEqual((await decide({ outbox: p('MAJOR', ['other']) })).record.route, ['noc', 'pager'], 'a SUPPRESS keeps it');
      const changed = await decide({ fingerprint: 'CRITICAL|0', outbox: p('CRITICAL', ['other']) });
      assert.deepEqual([changed.decision, changed.record.route], ['UPDATE', ['noc', 'pager']]);
      assert.deepEqual((await fx.store.incidents.get('default', key))?.route, ['noc', 'pager']);
      assert.deepEqual((await fx.store.queries.listIncidents('default', 100)).find((r) => r.key === key)?.route, ['noc', 'pager']);
      assert.equal(await fx.store.incidents.acknowledge('default', key), 'acknowledged');
      await fx.store.incidents.close('default', key);
      assert.deepEqual((await decide({ outbox: p('MAJOR', ['other']) })).record.route, ['other'], 'a create after the close takes its own');
      await fx.advance(61 * T);
      const again = await decide({ outbox: p('MAJOR') });
      assert.deepEqual([again.decision, again.record.route], ['CREATE', undefined], 'so does a create after an expiry; without a tree there is none');
      await decide({ fingerprint: 'MINOR|0', outbox: p('MINOR', ['late']) });
      const mine = (await fx.store.queries.listOutbox()).filter((e) => e.key === key);
      assert.deepEqual(
        mine.map((e) => [e.action, e.route]),
        [
          ['create', ['noc', 'pager']],
          ['update', ['noc', 'pager']],
          ['update', ['noc', 'pager']],
          ['close', ['noc', 'pager']],
          ['create', ['other']],
          ['create', undefined],
          ['update', undefined],
        ],
      );
      assert.equal((await fx.store.incidents.get('default', key))?.route, undefined, 'a key created without a route keeps none');
    });

    test("a key shows its create's identity and its latest arrival's summary and labels; the next create shows its own", async () => {
      const shown = (element_id: string, summary: string, labels?: Record<string, string>) => ({
        shown: { identity: { element_id }, summary, ...(labels ? { labels } : {}) },
      });
      const first = await decide(shown('olt-1', 'first', { region: 'eu' }));
      assert.deepEqual([first.record.identity, first.record.latest], [{ element_id: 'olt-1' }, { summary: 'first', labels: { region: 'eu' } }]);
      await decide({ ...shown('other', 'second', { region: 'us', team: 'net' }), fingerprint: 'CRITICAL|0' });
      await decide(shown('other', 'third'));
      const seen = await fx.store.incidents.get('default', key);
      assert.deepEqual(
        [seen?.identity, seen?.latest],
        [{ element_id: 'olt-1' }, { summary: 'third' }],
        'the identity stays the create’s, the rest is the latest',
      );
      await decide(); // an arrival that shows nothing leaves what was shown
      assert.deepEqual((await fx.store.incidents.get('default', key))?.latest, { summary: 'third' });
      const listed = (await fx.store.queries.listIncidents('default', 100)).find((r) => r.key === key);
      assert.deepEqual([listed?.identity, listed?.latest], [{ element_id: 'olt-1' }, { summary: 'third' }]);
      await fx.store.incidents.close('default', key);
      await decide(shown('olt-2', 'again', { region: 'us' }));
      const again = await fx.store.incidents.get('default', key);
      assert.deepEqual([again?.identity, again?.latest], [{ element_id: 'olt-2' }, { summary: 'again', labels: { region: 'us' } }]);
      await fx.store.incidents.close('default', key);
      await decide();
      const bare = await fx.store.incidents.get('default', key);
      assert.deepEqual([bare?.identity, bare?.latest], [undefined, undefined], 'a create that shows nothing keeps nothing of the one before');
    });

    const replaySkip = traits.replays ? false : `${backend} replays no journal`;
    test('a replayed journal entry claims with its route and what it shows; merged into a live key, the key keeps its route and identity', {
      skip: replaySkip,
    }, async () => {
      const incidents = fx.store.incidents as SharedIncidentStore;
      const now = Date.now();
      const rec = { tenant: 'default', key, fingerprint: 'MAJOR|0', createdAt: now, lastSeenAt: now, refires: 0, updates: 0, expiresAt: now + 60 * T };
      const shownA = { identity: { element_id: 'a' }, latest: { summary: 'a' } };
      assert.equal(await incidents.reconcile({ ...rec, route: ['journaled'], ...shownA }, 60 * T, 'j-route-1'), 'claimed');
      const claimed = await incidents.get('default', key);
      assert.deepEqual([claimed?.route, claimed?.identity, claimed?.latest], [['journaled'], { element_id: 'a' }, { summary: 'a' }]);
      const shownB = { identity: { element_id: 'b' }, latest: { summary: 'b', labels: { x: '1' } } };
      assert.equal(await incidents.reconcile({ ...rec, route: ['other'], ...shownB }, 60 * T, 'j-route-2'), 'merged');
      const merged = await incidents.get('default', key);
      assert.deepEqual(
        [merged?.route, merged?.identity, merged?.latest],
        [['journaled'], { element_id: 'a' }, { summary: 'b', labels: { x: '1' } }],
        'the live key keeps its route and identity; the journal brings the latest arrival',
      );
      await incidents.close('default', key);
      const close = (await fx.store.queries.listOutbox()).filter((e) => e.key === key && e.action === 'close');
      assert.deepEqual(
        close.map((e) => e.route),
        [['journaled']],
      );
    });

    test('a replayed journal entry that changed a live key is an UPDATE with its outbox entry; one that did not change it writes none', {
      skip: replaySkip,
    }, async () => {
      const incidents = fx.store.incidents as SharedIncidentStore;
      const entries = async () => (await fx.store.queries.listOutbox()).filter((e) => e.key === key);
      await decide({ outbox: { severity: 'MAJOR', summary: 'cut', data: {}, route: ['noc'] } });
      const now = Date.now();
      const rec = { tenant: 'default', key, createdAt: now, lastSeenAt: now, refires: 2, updates: 0, expiresAt: now + 60 * T };
      const payload = (severity: string) => ({ severity, summary: `now ${severity}`, data: { severity } });
      // The journal saw what the store already holds: a duplicate, nothing to deliver.
      assert.equal(await incidents.reconcile({ ...rec, fingerprint: 'MAJOR|0' }, 60 * T, 'j-same', payload('MAJOR')), 'merged');
      assert.deepEqual(
        (await entries()).map((e) => e.action),
        ['create'],
        'a merge that changes nothing writes nothing',
      );
      // The journal saw a change: the receiver must hear of it.
      assert.equal(await incidents.reconcile({ ...rec, fingerprint: 'CRITICAL|0' }, 60 * T, 'j-changed', payload('CRITICAL')), 'merged');
      const after = await entries();
      assert.deepEqual(
        after.map((e) => [e.action, e.severity, e.summary, e.route]),
        [
          ['create', 'MAJOR', 'cut', ['noc']],
          ['update', 'CRITICAL', 'now CRITICAL', ['noc']],
        ],
        'one update, with the journal’s arrival and the live key’s route',
      );
      assert.deepEqual(after[1]?.data, { severity: 'CRITICAL' });
      const live = await incidents.get('default', key);
      assert.deepEqual([live?.fingerprint, live?.updates], ['CRITICAL|0', 1]);
      // Replayed again (a replay that crashed half-way): done, and no second update.
      assert.equal(await incidents.reconcile({ ...rec, fingerprint: 'CRITICAL|0' }, 60 * T, 'j-changed', payload('CRITICAL')), 'done');
      assert.equal((await entries()).length, 2);
    });

    test('a replayed claim hands the store what the journal still owes (a create, or an update), and a create for a key with earlier creates', {
      skip: replaySkip,
    }, async () => {
      const incidents = fx.store.incidents as SharedIncidentStore;
      const creates = async (k: string) => (await fx.store.queries.listOutbox()).filter((e) => e.key === k && e.action === 'create');
      const now = Date.now();
      const rec = (k: string) => ({
        tenant: 'default',
        key: k,
        fingerprint: 'MAJOR|0',
        createdAt: now,
        lastSeenAt: now,
        refires: 0,
        updates: 0,
        expiresAt: now + 60 * T,
      });
      const payload = { severity: 'MAJOR', summary: 'again', data: {} };
      // A key the store never saw: the journal's create:1 is the store's numbering too; nothing more.
      const fresh = `${key}-fresh`;
      assert.equal(await incidents.reconcile(rec(fresh), 60 * T, 'j-fresh', payload), 'claimed');
      assert.equal((await creates(fresh)).length, 0);
      // A create the journal still owes (not delivered, or a repeat answered from its memory, which made none): the claim makes it.
      const repeat = `${key}-repeat`;
      assert.equal(await incidents.reconcile(rec(repeat), 60 * T, 'j-repeat', payload, 'create'), 'claimed');
      assert.deepEqual(
        (await creates(repeat)).map((e) => e.summary),
        ['again'],
      );
      // Only an update owed (its create went out from the journal): the claim queues the update.
      const owesUpdate = `${key}-owes-update`;
      assert.equal(await incidents.reconcile(rec(owesUpdate), 60 * T, 'j-owes-update', payload, 'update'), 'claimed');
      assert.deepEqual(
        (await fx.store.queries.listOutbox()).filter((e) => e.key === owesUpdate).map((e) => e.action),
        ['update'],
      );
      // A key created and closed before (its create counted by a fan-out): a later episode's create is the store's, behind the close.
      const later = `${key}-later`;
      await fx.store.incidents.decide({ tenant: 'default', key: later, fingerprint: 'MAJOR|0', ttlMs: 60 * T, outbox: payload });
      while ((await fx.store.deliveries.fanOut(['hook'], 1000)) > 0);
      await fx.store.incidents.close('default', later);
      assert.equal(await incidents.reconcile(rec(later), 60 * T, 'j-later', payload), 'claimed');
      const queued = (await fx.store.queries.listOutbox()).filter((e) => e.key === later);
      assert.deepEqual(
        queued.map((e) => e.action),
        ['close', 'create'],
      );
    });

    test('a journal entry from before its key was closed changes nothing; one from after it opens the key again', { skip: replaySkip }, async () => {
      const incidents = fx.store.incidents as SharedIncidentStore;
      const entries = async (k: string) => (await fx.store.queries.listOutbox()).filter((e) => e.key === k).map((e) => e.action);
      const payload = (severity: string) => ({ severity, summary: severity, data: {} });
      const now = Date.now();
      const rec = (k: string, fingerprint = 'MAJOR|0') => ({
        tenant: 'default',
        key: k,
        fingerprint,
        createdAt: now,
        lastSeenAt: now,
        refires: 0,
        updates: 0,
        expiresAt: now + 60 * T,
      });
      await decide({ outbox: payload('MAJOR') });
      assert.ok(await incidents.close('default', key));
      // Another replica took the close; this journal's arrival came a minute before it: the episode it belonged to is over.
      assert.equal(await incidents.reconcile(rec(key), 60 * T, 'j-before', payload('MAJOR'), 'create', 60_000), 'closed');
      assert.equal(await incidents.get('default', key), null, 'the key stays closed');
      assert.deepEqual(await entries(key), ['create', 'close'], 'no create after the close');
      assert.equal(await incidents.reconcile(rec(key), 60 * T, 'j-before', payload('MAJOR'), 'create', 60_000), 'done');
      // A new episode since: the old arrival is not folded into it either (its severity is the closed episode's).
      await decide({ fingerprint: 'MINOR|0', outbox: payload('MINOR') });
      assert.equal(await incidents.reconcile(rec(key, 'CRITICAL|0'), 60 * T, 'j-before-2', payload('CRITICAL'), null, 60_000), 'closed');
      assert.equal((await incidents.get('default', key))?.fingerprint, 'MINOR|0');
      assert.deepEqual(await entries(key), ['create', 'close', 'create']);
      // An arrival after the close is a new fault: it merges into the live episode, and changes it.
      assert.equal(await incidents.reconcile(rec(key, 'CRITICAL|0'), 60 * T, 'j-after', payload('CRITICAL'), null, 0), 'merged');
      assert.deepEqual(await entries(key), ['create', 'close', 'create', 'update']);
      // A close that found nothing live keeps no such mark: a journal's arrival for that key still stands.
      const unseen = `${key}-unseen`;
      assert.equal(await incidents.close('default', unseen), null);
      assert.equal(await incidents.reconcile(rec(unseen), 60 * T, 'j-unseen', payload('MAJOR'), 'create', 60_000), 'claimed');
      assert.deepEqual(await entries(unseen), ['create']);
    });

    // Planted faults it catches: a store's late run of the journal's own replica's call, or the replay of the key's
    // earlier entry, read as another replica's later arrival, so the journal's newer state loses to its own older one.
    test("a merge keeps the store's state only when another writer saw the key after the journal did; the journal's own writes never outrank it", {
      skip: replaySkip,
    }, async () => {
      const incidents = fx.store.incidents as SharedIncidentStore;
      const payload = (severity: string) => ({ severity, summary: severity, data: {} });
      const rec = (k: string, fingerprint: string) => {
        const now = fx.clock?.now() ?? Date.now();
        return { tenant: 'default', key: k, fingerprint, createdAt: now, lastSeenAt: now, refires: 0, updates: 0, expiresAt: now + 60 * T };
      };
      const sent = async (k: string) => (await fx.store.queries.listOutbox()).filter((e) => e.key === k).map((e) => `${e.action} ${e.severity}`);
      // The journal saw MINOR one unit before the replay; after that arrival the store ran a MAJOR, from `writer`.
      const lateOf = async (writer: string) => {
        const k = `${key}-${writer}`;
        await decide({ key: k, fingerprint: 'MAJOR|0', writer, outbox: payload('MAJOR') });
        assert.equal(await incidents.reconcile(rec(k, 'MINOR|0'), 60 * T, `journal:${k}`, payload('MINOR'), 'create', T, 'journal'), 'merged');
        return { fingerprint: (await incidents.get('default', k))?.fingerprint, sent: await sent(k) };
      };
      assert.deepEqual(
        await lateOf('journal'),
        { fingerprint: 'MINOR|0', sent: ['create MAJOR', 'update MINOR'] },
        "the journal's own call, which the store ran late, is older than the journal's arrivals",
      );
      assert.deepEqual(
        await lateOf('another'),
        { fingerprint: 'MAJOR|0', sent: ['create MAJOR', 'update MAJOR'] },
        "another writer's later arrival stays, and goes out again",
      );
      // One key, two entries of one journal: the second's arrivals (one unit ago) came after the first's (two).
      const twice = `${key}-twice`;
      assert.equal(await incidents.reconcile(rec(twice, 'MAJOR|0'), 60 * T, 'journal:1', payload('MAJOR'), 'create', 2 * T, 'journal'), 'claimed');
      assert.equal(await incidents.reconcile(rec(twice, 'MINOR|0'), 60 * T, 'journal:2', payload('MINOR'), 'update', T, 'journal'), 'merged');
      assert.equal((await incidents.get('default', twice))?.fingerprint, 'MINOR|0', "the second entry's later arrival wins over the first's replay");
      assert.deepEqual(await sent(twice), ['create MAJOR', 'update MINOR']);
      // Two replicas' journals, one key: the later arrival (one unit ago, CRITICAL) wins, whichever replays first.
      for (const order of [
        ['earlier', 'later'],
        ['later', 'earlier'],
      ] as const) {
        const k = `${key}-${order[0]}-first`;
        const entry = { earlier: { fp: 'MINOR|0', ago: 2 * T }, later: { fp: 'CRITICAL|0', ago: T } };
        const outcomes: string[] = [];
        for (const which of order) {
          const e = entry[which];
          outcomes.push(await incidents.reconcile(rec(k, e.fp), 60 * T, `${which}:1`, payload(e.fp.split('|')[0]!), 'create', e.ago, which));
        }
        assert.deepEqual(outcomes, ['claimed', 'merged']);
        assert.equal((await incidents.get('default', k))?.fingerprint, 'CRITICAL|0', `${order.join(' then ')}: the later arrival wins`);
        assert.equal((await sent(k)).at(-1), 'update CRITICAL', `${order.join(' then ')}: and is the last word sent`);
      }
    });

    test('a close or an acknowledgement that names an episode acts on that episode only; another, or none, changes nothing', async () => {
      const incidents = fx.store.incidents;
      const actions = async () => (await fx.store.queries.listOutbox()).filter((e) => e.key === key).map((e) => e.action);
      const first = (await decide({ outbox: { severity: 'MAJOR', summary: 's', data: {} } })).record.createdAt;
      const other = first + 1;
      assert.equal(await incidents.acknowledge('default', key, undefined, other), 'absent', 'another episode is not live to this call');
      assert.equal(await incidents.close('default', key, undefined, undefined, other), null);
      const still = await incidents.get('default', key);
      assert.ok(still, 'still live');
      assert.equal(still.acknowledged, undefined, 'not acknowledged');
      assert.deepEqual(await actions(), ['create']);
      assert.equal(await incidents.acknowledge('default', key, undefined, first), 'acknowledged');
      assert.equal(await incidents.acknowledge('default', key, undefined, first), 'repeat');
      assert.equal((await incidents.close('default', key, undefined, undefined, first))?.createdAt, first);
      assert.equal(await incidents.get('default', key), null);
      // A new episode, later: the first one's name finds nothing in it.
      await fx.advance(T);
      const second = (await decide({ outbox: { severity: 'MAJOR', summary: 's', data: {} } })).record.createdAt;
      assert.ok(second > first);
      assert.equal(await incidents.close('default', key, undefined, undefined, first), null);
      assert.equal(await incidents.acknowledge('default', key, undefined, first), 'absent');
      assert.deepEqual(await actions(), ['create', 'update', 'close', 'create']);
      assert.ok(await incidents.get('default', key), 'the new episode is untouched');
      // A key that was never live, named by an episode: nothing.
      assert.equal(await incidents.close('default', `${key}-never`, undefined, undefined, first), null);
    });

    // Planted faults it catches: an edit of a closed key opening a new episode; an edit that changes only what
    // the alert says (the same severity) writing no update, so the ticket never learns it; an edit undoing an
    // arrival that came after its read.
    test('a claim that amends an episode acts on that live episode as read only, as an UPDATE even at the same severity; else it changes nothing', async () => {
      const say = (severity: string, summary: string) => ({ severity, summary, data: { summary } });
      const sent = async (k = key) => (await fx.store.queries.listOutbox()).filter((e) => e.key === k).map((e) => `${e.action} ${e.summary}`.trim());
      const first = (await decide({ outbox: say('MAJOR', 'disk full') })).record.createdAt;
      const reworded = await decide({
        amends: { episode: first, refires: 0 },
        outbox: say('MAJOR', 'disk full on /var'),
        shown: { summary: 'disk full on /var' },
      });
      assert.deepEqual([reworded.decision, reworded.reason], ['UPDATE', 'amended'], 'the same severity, reworded: an update');
      const raised = await decide({ amends: { episode: first, refires: 1 }, fingerprint: 'CRITICAL|0', outbox: say('CRITICAL', 'disk full on /var') });
      assert.deepEqual([raised.decision, raised.reason], ['UPDATE', 'severity']);
      const live = await fx.store.incidents.get('default', key);
      assert.deepEqual([live?.fingerprint, live?.updates, live?.refires, live?.latest?.summary], ['CRITICAL|0', 2, 2, 'disk full on /var']);
      // An edit that read the record before the last arrival (refires 1, now 2), another episode's: nothing changes.
      for (const amends of [
        { episode: first, refires: 1 },
        { episode: first + 1, refires: 2 },
      ]) {
        const other = await decide({ amends, outbox: say('MINOR', 'not this one') });
        assert.deepEqual([other.decision, other.reason], ['SUPPRESS', 'stale'], JSON.stringify(amends));
      }
      assert.deepEqual(await sent(), ['create disk full', 'update disk full on /var', 'update disk full on /var']);
      assert.equal((await fx.store.incidents.get('default', key))?.fingerprint, 'CRITICAL|0');
      // Closed: an edit of it opens nothing.
      await fx.store.incidents.close('default', key);
      assert.deepEqual((await decide({ amends: { episode: first, refires: 2 }, outbox: say('MAJOR', 'too late') })).reason, 'stale');
      assert.equal(await fx.store.incidents.get('default', key), null, 'no episode opened');
      // A key never live: nothing.
      const never = `${key}-never`;
      assert.equal((await decide({ key: never, amends: { episode: first, refires: 0 }, outbox: say('MAJOR', 'never') })).reason, 'stale');
      assert.equal(await fx.store.incidents.get('default', never), null);
      assert.deepEqual(await sent(never), []);
      assert.deepEqual(await sent(), ['create disk full', 'update disk full on /var', 'update disk full on /var', 'close']);
    });

    // Planted fault it catches: a repeat replacing what an Opsgenie alert shows, so an edit to that text finds nothing to change.
    test('a claim that shows on a change only: a repeat leaves the latest as it was, a create or an update replaces it', async () => {
      const said = async () => (await fx.store.incidents.get('default', key))?.latest?.summary;
      await decide({ showsOnChange: true, shown: { summary: 'first' } });
      await decide({ showsOnChange: true, shown: { summary: 'repeat' } });
      assert.equal(await said(), 'first', 'a repeat changes nothing shown');
      await decide({ showsOnChange: true, fingerprint: 'CRITICAL|0', shown: { summary: 'raised' } });
      assert.equal(await said(), 'raised', 'an update shows its arrival');
      await decide({ shown: { summary: 'plain repeat' }, fingerprint: 'CRITICAL|0' });
      assert.equal(await said(), 'plain repeat', 'without the flag a repeat shows its arrival, as ever');
    });

    test('200 concurrent identical claims write exactly one outbox entry', async () => {
      const outbox = { severity: 'MAJOR', summary: '', data: {} };
      await Promise.all(Array.from({ length: 200 }, () => decide({ outbox })));
      assert.equal((await fx.store.queries.listOutbox()).filter((e) => e.key === key).length, 1);
    });

    test('two handles on the same data race to exactly one CREATE', { skip: peerSkip }, async () => {
      const peer = await fx.openPeer!();
      try {
        const both = await Promise.all(Array.from({ length: 100 }, (_, i) => (i % 2 ? fx.store : peer).incidents.decide(claim())));
        assert.equal(both.filter((r) => r.outcome.kind === 'created').length, 1);
      } finally {
        await peer.close();
      }
    });
  });
}
