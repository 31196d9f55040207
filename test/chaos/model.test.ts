// needs: redis
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { systemClock } from '../../src/core/clock.js';
import { configSchema } from '../../src/config/schema.js';
import { AdapterRegistry } from '../../src/delivery/registry.js';
import { DeliveryWorker } from '../../src/delivery/worker.js';
import { Deduplicator } from '../../src/engine/deduplicator.js';
import { GroupApplier, groupKeyOf, groupSeverity } from '../../src/groups/groups.js';
import type { Labels } from '../../src/core/matcher.js';
import { SilenceCache } from '../../src/mute/silence-cache.js';
import { FailOpenStore } from '../../src/store/failopen/fail-open-store.js';
import { Journal } from '../../src/store/failopen/journal.js';
import { redisConnection } from '../../src/store/redis/connection.js';
import { RedisStore } from '../../src/store/redis/redis-store.js';
import { startSink, type FakeServer, type Recorded } from '../fakes/http-fake.js';
import { startRedis, type RedisServer } from '../helpers/redis.js';
import { tempDir } from '../helpers/tmp.js';
import { checkHistory, describe as describeViolation, History } from './history.js';
import { testSeed } from '../helpers/seed.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const RUNS = Number(process.env.MODEL_RUNS ?? 200);
const SEED = testSeed('chaos/model', 'MODEL_SEED');
const KEYS = ['olt-1', 'olt-2', 'olt-3'];
const LEASE_MS = 300;
const TIMEOUT_MS = 200;
const SEVERITIES = ['MAJOR', 'CRITICAL'] as const;

let redis: RedisServer;
let sink: FakeServer;
/** The calls the receiver accepted (answered 2xx). */
const accepted: Recorded[] = [];
let failing = false;
before(async () => {
  redis = await startRedis();
  sink = await startSink(200, {});
  sink.faults = (q) => {
    if (failing) return { status: 503 };
    accepted.push(q);
    return 'ok';
  };
});
after(async () => {
  await sink?.close();
  await redis?.stop();
});

/** What a replica's mute source answered when its worker leased a delivery. */
interface Gate {
  element: string;
  key: string;
  at: number;
  muted: boolean;
}

/**
 * One process of onceonly, in-process: fail-open over the shared Redis, its
 * journal, the engine, its copy of the silences (kept in the journal, as a
 * serving replica keeps it) and a delivery worker that checks them at lease
 * time. `gates` records each answer the worker got, for the invariant.
 */
async function openReplica(journalPath: string, gates: Gate[]) {
  const config = configSchema.parse({
    adapters: [
      { name: 'hook', type: 'webhook', url: `${sink.url}/in`, timeout_ms: TIMEOUT_MS },
      { name: 'groups', type: 'webhook', url: `${sink.url}/groups`, timeout_ms: TIMEOUT_MS, grouped: true },
    ],
    // Every key shares the root cause: one group, which every ingest of every replica changes.
    grouping: { by: ['root_cause_id'], wait_seconds: 0 },
    delivery: { lease_ms: LEASE_MS, base_delay_ms: 1, max_delay_ms: 5 },
  });
  const journal = new Journal(journalPath, systemClock);
  const store = new FailOpenStore(new RedisStore(redisConnection(redis.url), 'redis'), journal, systemClock, {
    timeoutMs: 25,
    probeIntervalMs: 20,
  });
  const silences = new SilenceCache(store.silences, () => {}, 50, journal);
  await silences.start();
  const source = {
    mutedBy(tenant: string, labels: Labels, now: number) {
      const m = silences.mutedBy(tenant, labels, now);
      gates.push({ element: labels.element_id ?? '', key: labels.dedup_key ?? '', at: now, muted: m !== null });
      return m;
    },
  };
  const registry = new AdapterRegistry(() => config.adapters, { clock: systemClock, tickets: store.tickets });
  const groups = new GroupApplier({ groups: store.groups, incidents: store.incidents, config: () => config, clock: systemClock });
  const worker = new DeliveryWorker({
    store: store.deliveries,
    adapters: () => registry.current(),
    groups: () => groups,
    policy: () => ({ maxRetries: 1000, baseMs: 1, maxMs: 5 }),
    leaseMs: LEASE_MS,
    random: () => 0,
    mutes: { source, now: () => systemClock.now(), recheckMs: 20 },
  });
  return { store, journal, worker, silences, dedup: new Deduplicator({ store, config: () => config }) };
}
type Replica = Awaited<ReturnType<typeof openReplica>>;

/**
 * A silence the model made: `from` is when every replica had loaded it (null
 * when one could not, so nothing is claimed for it), `to` when its expiry was
 * asked for (null: never), whether or not that answered.
 */
interface Made {
  id: string;
  element: string;
  from: number | null;
  to: number | null;
}

interface Real {
  run: number;
  tenant: string;
  journal: string;
  replica: Replica;
  /** replicas that "crashed": abandoned mid-flight, closed at the end of the run */
  crashed: Replica[];
  inflight: Array<Promise<unknown>>;
  history: History;
  down: boolean;
  silences: Made[];
  gates: Gate[];
  tally: { ingests: number; outages: number; crashes: number; adapterFailures: number; silences: number; expiries: number };
}
type Model = { sent: Map<string, Set<string>> };

const ingest = (key: string, severity: string): fc.AsyncCommand<Model, Real> => ({
  check: () => true,
  toString: () => `ingest(${key}, ${severity})`,
  async run(m, r) {
    const fps = m.sent.get(key) ?? new Set<string>();
    fps.add(`${severity}|0`);
    m.sent.set(key, fps);
    r.tally.ingests++;
    const dedup = r.replica.dedup;
    const start = r.history.now();
    // Not awaited: ingests overlap each other and every other command, in the order the scheduler picks.
    r.inflight.push(
      dedup.decideIncident({ element_id: key, fault_class: 'LOS', root_cause_id: 'cut', severity }, r.tenant).then(
        (d) =>
          r.history.record({
            kind: 'ingest',
            key: d.dedup_key,
            fp: `${severity}|0`,
            replica: 0,
            start,
            end: r.history.now(),
            status: 200,
            decision: d.decision,
            provisional: d.provisional,
          }),
        () => r.history.record({ kind: 'ingest', key, fp: `${severity}|0`, replica: 0, start, end: r.history.now(), status: 0 }),
      ),
    );
  },
});

const storeDown: fc.AsyncCommand<Model, Real> = {
  check: () => true,
  toString: () => 'store down',
  async run(_m, r) {
    if (r.down) return;
    r.down = true;
    r.tally.outages++;
    await redis.kill('SIGSTOP');
    // Long enough for the ingests in flight to hit the fail-open timeout (25 ms).
    await sleep(40);
  },
};
const storeUp: fc.AsyncCommand<Model, Real> = {
  check: () => true,
  toString: () => 'store up',
  async run(_m, r) {
    if (!r.down) return;
    r.down = false;
    await redis.kill('SIGCONT');
    await sleep(10);
  },
};
const crash: fc.AsyncCommand<Model, Real> = {
  check: () => true,
  toString: () => 'crash',
  async run(_m, r) {
    // The process is gone with whatever it had in flight; a new one starts on the same journal file.
    r.tally.crashes++;
    const dead = r.replica;
    // As a kill leaves it: no timer of it runs again (close() clears the fail-open probe and the watch before
    // it awaits anything, and the silence poll stops), and its journal is let go at once, so what it had in
    // flight that still needed the file fails there. Commands already on their way to Redis may land, as a
    // dead process's can.
    dead.silences.stop();
    void dead.store.close().catch(() => {});
    void dead.journal.close().catch(() => {});
    r.crashed.push(dead);
    r.replica = await openReplica(r.journal, r.gates);
  },
};
const deliver: fc.AsyncCommand<Model, Real> = {
  check: () => true,
  toString: () => 'deliver',
  async run(_m, r) {
    r.inflight.push(r.replica.worker.runOnce().catch(() => {}));
  },
};
const adapter = (fails: boolean): fc.AsyncCommand<Model, Real> => ({
  check: () => true,
  toString: () => (fails ? 'adapter fails' : 'adapter ok'),
  async run(_m, r) {
    if (fails) r.tally.adapterFailures++;
    failing = fails;
  },
});

const silence = (element: string): fc.AsyncCommand<Model, Real> => ({
  check: () => true,
  toString: () => `silence(${element})`,
  async run(_m, r) {
    r.tally.silences++;
    const now = Date.now();
    const s = {
      id: randomUUID(),
      tenant: r.tenant,
      matchers: [{ name: 'element_id', value: element, isEqual: true, isRegex: false }],
      startsAt: now,
      endsAt: now + 3_600_000,
      createdBy: 'model',
      comment: 'chaos',
      updatedAt: now,
    };
    // Refused while the store is away, or indeterminate (it may land when Redis resumes): nothing is claimed.
    const made = await r.replica.store.silences.create(s, { open: 1000, ended: 1000 }, now).catch(() => false);
    if (!made) return;
    // Every replica applies it (their polls would within 50 ms); from then on it must mute.
    const loaded = await Promise.all(
      [r.replica, ...r.crashed].map((x) =>
        x.silences.refresh().then(
          () => true,
          () => false,
        ),
      ),
    );
    r.silences.push({ id: s.id, element, from: loaded.every(Boolean) ? Date.now() : null, to: null });
  },
});
const expire = (pick: number): fc.AsyncCommand<Model, Real> => ({
  check: () => true,
  toString: () => `expire(#${pick})`,
  async run(_m, r) {
    const open = r.silences.filter((x) => x.to === null);
    const s = open[pick % Math.max(1, open.length)];
    if (!s) return;
    r.tally.expiries++;
    s.to = Date.now();
    await r.replica.store.silences.expire(r.tenant, s.id, Date.now()).catch(() => {});
  },
});

const anIngest = fc.constantFrom(...KEYS).chain((k) => fc.constantFrom(...SEVERITIES).map((s) => ingest(k, s)));
// Ingests weigh four times as much as each fault, deliveries and silences twice, expiries once.
const commands = fc.commands(
  [
    anIngest,
    anIngest,
    anIngest,
    anIngest,
    fc.constant(deliver),
    fc.constant(storeDown),
    fc.constant(storeUp),
    fc.constant(crash),
    fc.constant(deliver),
    fc.boolean().map(adapter),
    fc.constantFrom(...KEYS).map(silence),
    fc.constantFrom(...KEYS).map(silence),
    fc.nat().map(expire),
  ],
  { maxCommands: 30 },
);

/** Store up, journals replayed, adapter healthy, every delivery made: then what must hold. */
async function settleAndCheck(r: Real, m: Model) {
  if (r.down) await redis.kill('SIGCONT');
  r.down = false;
  failing = false;
  await Promise.all(r.inflight);
  for (let i = 0; ; i++) {
    try {
      await r.replica.store.ping();
      if ((await r.replica.store.journal.size()) === 0) break;
    } catch {}
    if (i > 500) throw new Error('the journal was not replayed within 10 s');
    await sleep(20);
  }
  // A provisional decision reaches the shared store when its journal is replayed: in flight until now.
  const replayed = r.history.now();
  for (const o of r.history.ops) if (o.provisional) o.end = replayed;
  // While the silences still stand, the worker delivers what it may: what they mute is held, and waits.
  if (r.silences.some((x) => x.to === null)) {
    for (let i = 0, still = 0, last = ''; still < 3 && i < 50; i++) {
      await r.replica.worker.runOnce();
      const b = await r.replica.store.deliveries.backlog();
      const now = `${accepted.length}/${b.pending}/${b.dead}`;
      still = now === last ? still + 1 : 0;
      last = now;
      await sleep(10);
    }
  }
  // Every mute ends: each silence the store holds (those whose answer was lost, too) is expired.
  const open = await r.replica.store.inner.silences.list(r.tenant);
  for (const x of open) await r.replica.store.inner.silences.expire(r.tenant, x.id, Date.now());
  for (const x of r.silences) x.to ??= Date.now();
  await r.replica.silences.refresh();
  const mutesEnded = accepted.length;
  for (let i = 0; ; i++) {
    await r.replica.worker.runOnce();
    const b = await r.replica.store.deliveries.backlog();
    // Nothing pending and nothing in the outbox: a delivery (the group step) may write an entry of its own.
    if (b.pending === 0 && b.oldestAt === null) break;
    if (i > 400) throw new Error(`deliveries not drained: ${JSON.stringify(b)}`);
    await sleep(10); // backoffs, and leases left by a crashed replica (300 ms)
  }
  const violations = checkHistory(r.history.ops);
  assert.deepEqual(
    violations.map((v) => describeViolation(v)),
    [],
    `run ${r.run}: illegal history`,
  );
  // No delivery while a matching silence was active at lease time: the worker's mute source
  // let nothing through for an element after every replica had loaded its silence and before its expiry was asked.
  const leaks = r.gates.filter((g) => !g.muted && r.silences.some((x) => x.element === g.element && x.from !== null && x.from < g.at && g.at < x.to!));
  assert.deepEqual(
    leaks.map((g) => `${g.element} let through at ${g.at}`),
    [],
    `run ${r.run}: a delivery left while its silence was active (${JSON.stringify(r.silences)})`,
  );
  // The same, seen by the receiver: every call it got (but a close, which is never held) follows an
  // unmuted look at that key's mutes. The last look before the call must be that one, unless a worker
  // leased the key after an earlier lease ran out with the call still in flight: that look comes at least
  // a lease less the call's timeout after the one that let the call through.
  const calledMuted = accepted.filter((q) => {
    if (q.body?.tenant !== r.tenant || q.body.action === 'close') return false;
    const looks = r.gates.filter((g) => g.key === q.body.key && g.at <= q.at);
    const last = looks.at(-1);
    return !last || (last.muted && !looks.some((g) => !g.muted && last.at - g.at >= LEASE_MS - TIMEOUT_MS));
  });
  assert.deepEqual(
    calledMuted.map((q) => `${q.body.action} of ${q.body.data?.element_id} arrived at ${q.at}`),
    [],
    `run ${r.run}: the receiver got a call its worker had found muted (${JSON.stringify(r.silences)})`,
  );
  const answered = new Set(r.history.ops.filter(History.ok).map((o) => o.key));
  const delivered = accepted.filter((q) => q.body?.tenant === r.tenant);
  let staleAfterMerge = 0;
  for (const key of answered) {
    // Read the shared store itself: everything is replayed into it by now, and a
    // 25 ms fail-open timeout tripped by a loaded machine must not turn this
    // read into a refusal (the journal does not hold what was decided in Redis).
    const live = await r.replica.store.inner.incidents.get(r.tenant, key);
    assert.ok(live, `run ${r.run}: ${key} was answered but is not live`);
    const sentFps = [...m.sent.values()].flatMap((s) => [...s]);
    assert.ok(sentFps.includes(live.fingerprint), `run ${r.run}: ${key} holds ${live.fingerprint}, never sent`);
    // Live when the last mute ended: delivered exactly once in effect. The receiver honours
    // Idempotency-Key as docs/adapters.md asks (a repeat of a key it has seen is a replay, not news):
    // one ticket, and its last news is the key's latest state.
    const seen = new Set<string>();
    const news = delivered.filter((q) => {
      const k = String(q.headers['idempotency-key']);
      if (q.body.key !== key || seen.has(k)) return false;
      seen.add(k);
      return true;
    });
    const tickets = news.filter((q) => q.body.action === 'create').length;
    // The documented price of failing open: a CREATE decided in the journal while the store was away may stand beside
    // another (during the replay, say); the adapters that can close the second do. Every extra ticket needs one.
    const provisionalCreates = r.history.ops.filter((o) => o.key === key && o.provisional && o.decision === 'CREATE').length;
    assert.ok(
      tickets >= 1 && tickets <= 1 + Math.max(0, provisionalCreates - 1),
      `run ${r.run}: ${key} made ${tickets} tickets with ${provisionalCreates} provisional CREATEs`,
    );
    const latest = news.at(-1)?.body.severity === live.fingerprint.split('|')[0];
    // Known gap, counted rather than asserted: a replay that merges a provisional CREATE whose state differs
    // from the live record's takes the journal's state without queuing an update for it, and the journal's
    // own create may reuse the live create's Idempotency-Key; the receiver keeps the older state.
    if (provisionalCreates > 0) staleAfterMerge += latest ? 0 : 1;
    else assert.ok(latest, `run ${r.run}: ${key}'s last news is a state it no longer has`);
  }
  // The group: every answered key is live (nothing closes here), so every one is a member, and the
  // grouped receiver got one create for it and, last, the full member list (each news once by Idempotency-Key).
  const gk = groupKeyOf(['cut']);
  const group = await r.replica.store.inner.groups.get(r.tenant, gk);
  assert.deepEqual(Object.keys(group?.members ?? {}).sort(), [...answered].sort(), `run ${r.run}: the group's members are not the live keys`);
  const seenGroup = new Set<string>();
  const groupNews = delivered.filter((q) => {
    const k = String(q.headers['idempotency-key']);
    if (q.body.key !== gk || seenGroup.has(k)) return false;
    seenGroup.add(k);
    return true;
  });
  assert.equal(groupNews.filter((q) => q.body.action === 'create').length, answered.size > 0 ? 1 : 0, `run ${r.run}: group creates`);
  assert.deepEqual(groupNews.at(-1)?.body.data.members ?? [], [...answered].sort(), `run ${r.run}: the group's last news lacks members`);
  if (group) assert.equal(groupNews.at(-1)?.body.severity, groupSeverity(group.members), `run ${r.run}: the group's last news has another severity`);
  const released = accepted.slice(mutesEnded).filter((q) => q.body?.tenant === r.tenant).length;
  return {
    answered: answered.size,
    provisional: r.history.ops.filter((o) => o.provisional).length,
    creates: delivered.filter((q) => q.body.action === 'create').length,
    claimed: r.silences.filter((x) => x.from !== null).length,
    held: r.gates.filter((g) => g.muted).length,
    released,
    staleAfterMerge,
  };
}

// Random interleavings of ingest, store down and up, crash, delivery passes,
// adapter failures and silences made and expired, run against the real parts
// (a redis-server the test stops with SIGSTOP, the SQLite journal, the engine,
// the silence copies, the worker and a webhook receiver), checked against the
// model: a legal history per key; no call leased while a matching silence
// stood; every answered key live with a fingerprint that was sent and, once
// the last mute ended, delivered exactly once in effect with its latest state;
// and the one group every key belongs to holds exactly the live keys, reached
// its grouped receiver as one create, and last told it every member.
// The seed is printed; MODEL_SEED=… replays a run.
test(`model: ${RUNS} random interleavings of ingest / store down / store up / crash / deliver / adapter failure / silence / expiry (seed ${SEED})`, async () => {
  const totals = {
    runs: 0,
    commands: 0,
    ingests: 0,
    outages: 0,
    crashes: 0,
    adapterFailures: 0,
    silences: 0,
    expiries: 0,
    provisional: 0,
    keys: 0,
    creates: 0,
    claimed: 0,
    held: 0,
    released: 0,
    staleAfterMerge: 0,
  };
  const dir = tempDir();
  try {
    await fc.assert(
      fc.asyncProperty(fc.scheduler(), commands, async (s, cmds) => {
        const run = ++totals.runs;
        const journal = `${dir.path}/journal-${run}.db`;
        const gates: Gate[] = [];
        const real: Real = {
          run,
          tenant: `m${SEED}r${run}`,
          journal,
          replica: await openReplica(journal, gates),
          crashed: [],
          inflight: [],
          history: new History(),
          down: false,
          silences: [],
          gates,
          tally: { ingests: 0, outages: 0, crashes: 0, adapterFailures: 0, silences: 0, expiries: 0 },
        };
        const model: Model = { sent: new Map() };
        try {
          await fc.scheduledModelRun(s, () => ({ model, real }), cmds);
          const figures = await settleAndCheck(real, model);
          totals.commands += [...cmds].length;
          totals.provisional += figures.provisional;
          totals.keys += figures.answered;
          totals.creates += figures.creates;
          totals.claimed += figures.claimed;
          totals.held += figures.held;
          totals.released += figures.released;
          totals.staleAfterMerge += figures.staleAfterMerge;
          for (const k of Object.keys(real.tally) as Array<keyof Real['tally']>) totals[k] += real.tally[k];
        } finally {
          if (real.down) await redis.kill('SIGCONT');
          await Promise.all([real.replica, ...real.crashed].map((x) => x.store.close().catch(() => {})));
        }
      }),
      { numRuns: RUNS, seed: SEED, endOnFailure: true, includeErrorInReport: true },
    );
  } finally {
    dir.remove();
    console.log(`model (seed ${SEED}): ${JSON.stringify(totals)}`);
  }
  // A model that injected nothing proves nothing: over a full run every kind of fault happened.
  if (RUNS >= 100) {
    const missing = (['outages', 'crashes', 'adapterFailures', 'silences', 'expiries', 'provisional', 'held', 'released'] as const).filter(
      (k) => totals[k] === 0,
    );
    assert.deepEqual(missing, [], `these never happened in ${RUNS} runs: ${JSON.stringify(totals)}`);
  }
});
