import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Histogram, Registry } from 'prom-client';
import { manualClock } from '../../src/core/clock.js';
import { configSchema, type Config } from '../../src/config/schema.js';
import { ValidationError } from '../../src/core/validation.js';
import { Deduplicator, type IncidentDecision } from '../../src/engine/deduplicator.js';
import { HistoryRecorder } from '../../src/history/recorder.js';
import { MaintenanceWindows } from '../../src/mute/maintenance.js';
import { instrumentStore } from '../../src/observe/instrumented-store.js';
import { wrapFacet } from '../../src/store/facet.js';
import { MemoryStore } from '../../src/store/memory/memory-store.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import type { DedupStore } from '../../src/store/contract/index.js';
import { tempDir } from '../helpers/tmp.js';

/**
 * The decision answered within the caller's turn of the event loop: on a
 * store whose step never waits (memory) with nothing configured that must be
 * awaited, `decideIncidentNow` answers a plain value, the same one
 * `decideIncident` resolves to; anything that waits makes it a promise of
 * that same answer.
 */

const olt7 = (severity = 'MAJOR') => ({ element_id: 'olt-7', fault_class: 'LOS', root_cause_id: 'fiber-cut-12', severity, summary: 'OLT 7 lost signal' });
/** A create, a repeat, a change and two repeats of the change. */
const ARRIVALS = [olt7(), olt7(), olt7('CRITICAL'), olt7('CRITICAL'), olt7('CRITICAL')];
const DECISIONS = ['CREATE', 'SUPPRESS', 'UPDATE', 'SUPPRESS', 'SUPPRESS'];
const LIMITS = { maxEvents: 50, keepMs: 86_400_000 };
const served = (raw: DedupStore) =>
  instrumentStore(raw, new Histogram({ name: 'lat', help: 'h', labelNames: ['operation', 'outcome'], registers: [new Registry()] }));

test('on the memory store, as served and with nothing to await, each decision is a plain value equal to the async form, history and all', async () => {
  const clock = manualClock(1_700_000_000_000);
  const engine = () => {
    const store = served(new MemoryStore(clock));
    const recorder = new HistoryRecorder({ store: store.history, limits: () => LIMITS, clock });
    return { store, recorder, dedup: new Deduplicator({ store, history: { recorder, replica: 'r1' } }) };
  };
  const now = engine();
  const later = engine();
  let key = '';
  for (const [i, input] of ARRIVALS.entries()) {
    clock.advance(1_000);
    const answered = now.dedup.decideIncidentNow(input);
    assert.ok(!(answered instanceof Promise), `arrival ${i} was answered in a promise`);
    const awaited = await later.dedup.decideIncident(input);
    assert.deepEqual(answered, awaited);
    assert.equal((answered as IncidentDecision).decision, DECISIONS[i]);
    assert.equal((answered as IncidentDecision).muted, null);
    key = awaited.dedup_key;
  }
  assert.deepEqual(await now.dedup.getIncident(key), await later.dedup.getIncident(key));
  await now.recorder.flush();
  await later.recorder.flush();
  const events = await now.store.history.read('default', key);
  assert.deepEqual(
    events.map((e) => [e.type, e.decision, e.count ?? 1]),
    [
      ['decision', 'CREATE', 1],
      ['decision', 'SUPPRESS', 1],
      ['decision', 'UPDATE', 1],
      ['decision', 'SUPPRESS', 2],
    ],
  );
  assert.deepEqual(events, await later.store.history.read('default', key));
});

test('a bad input throws at once, not in a promise, and changes nothing', async () => {
  const store = new MemoryStore(manualClock(1_000));
  const dedup = new Deduplicator({ store });
  const bad = { element_id: 'olt-7', fault_class: 'LOS', severity: 'MAJOR' };
  assert.throws(
    () => dedup.decideIncidentNow(bad),
    (e: unknown) => e instanceof ValidationError && /root_cause_id/.test(e.message),
  );
  await assert.rejects(dedup.decideIncident(bad), ValidationError);
  assert.deepEqual(await dedup.listIncidents('default', 10), []);
});

test('whatever must be awaited makes the answer a promise of the same decision', async (t) => {
  const clock = manualClock(1_700_000_000_000);
  /** Each arrival's answer a promise, or (`waits` false for its decision) a plain value. */
  const expectPromise = async (dedup: Deduplicator, waits: (decision: string) => boolean = () => true) => {
    for (const [i, input] of ARRIVALS.entries()) {
      clock.advance(1_000);
      const answered = dedup.decideIncidentNow(input);
      assert.equal(answered instanceof Promise, waits(DECISIONS[i]!), `arrival ${i} (${DECISIONS[i]})`);
      assert.equal((await answered).decision, DECISIONS[i]);
    }
  };

  await t.test('a maintenance window that could mute: the answer says whether it does', async () => {
    const config: Config = configSchema.parse({
      maintenance: [{ name: 'los-work', matchers: ['fault_class="LOS"'], time_intervals: [{ times: [{ start_time: '00:00', end_time: '24:00' }] }] }],
    });
    const dedup = new Deduplicator({
      store: new MemoryStore(clock),
      config: () => config,
      mutes: { source: new MaintenanceWindows(() => config.maintenance), now: () => clock.now() },
    });
    await expectPromise(dedup);
    assert.deepEqual((await dedup.decideIncidentNow(olt7())).muted, { by: 'maintenance', id: 'los-work' });
  });

  await t.test('flapping configured: a create is recorded as a transition first; a repeat or a change records none', async () => {
    const config: Config = configSchema.parse({ flapping: { max_transitions: 4, window_seconds: 600, quiet_seconds: 300 } });
    const store = new MemoryStore(clock);
    const dedup = new Deduplicator({ store, config: () => config, flaps: { store: store.flaps, now: () => clock.now() } });
    await expectPromise(dedup, (decision) => decision === 'CREATE');
    const key = (await dedup.decideIncident(olt7('CRITICAL'))).dedup_key;
    assert.equal(await dedup.closeIncident(key), true);
    // The create and the close both recorded: the first answer waited for its record.
    assert.deepEqual(
      (await store.flaps.history('default', key, 0)).map((x) => x.action),
      ['create', 'close'],
    );
  });

  await t.test('SQLite: its step waits for its commit', async () => {
    const dir = tempDir('onceonly-sync-');
    const store = new SqliteStore(`${dir.path}/onceonly.db`, clock);
    try {
      await expectPromise(new Deduplicator({ store }));
    } finally {
      await store.close();
      dir.remove();
    }
  });

  await t.test('a wrapper that answers asynchronously (as the fail-open store does) leaves the synchronous step out', async () => {
    const raw = new MemoryStore(clock);
    const incidents = wrapFacet(raw.incidents, (_method, call) => call());
    assert.equal(incidents.decideNow, undefined);
    await expectPromise(new Deduplicator({ store: { ...served(raw), incidents } }));
  });
});
