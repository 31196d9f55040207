import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { manualClock } from '../../src/core/clock.js';
import { configSchema, type Config } from '../../src/config/schema.js';
import { AdapterRegistry } from '../../src/delivery/registry.js';
import { DeliveryWorker, type DeliveryOutcome } from '../../src/delivery/worker.js';
import { GROUP_LINE } from '../../src/delivery/gate/group-stage.js';
import { Deduplicator } from '../../src/engine/deduplicator.js';
import { GroupApplier, groupKeyOf } from '../../src/groups/groups.js';
import { GroupWait } from '../../src/mute/group-wait.js';
import { MaintenanceWindows } from '../../src/mute/maintenance.js';
import { Holds } from '../../src/mute/holds.js';
import { MemoryStore } from '../../src/store/memory/memory-store.js';
import { startSink, type FakeServer } from '../fakes/http-fake.js';

const EVERY_DAY = ['sunday', 'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday'];

let hook: FakeServer;
before(async () => {
  hook = await startSink(200, {});
});
after(() => hook.close());

/**
 * One replica's delivery side on a memory store: the real registry, worker,
 * group applier, maintenance windows and group wait, as `serve` wires them.
 * `groupsFrom` is the store the applier commits groups to: another, closed
 * store makes every group change fail as a store outage would.
 */
function replica(yaml: Record<string, unknown>, groupsFrom?: MemoryStore) {
  const clock = manualClock(Date.parse('2026-12-02T10:00:00Z'));
  const store = new MemoryStore(clock);
  let config: Config = configSchema.parse(yaml);
  const settled: Array<{ adapter: string; kind: string; action: string; outcome: DeliveryOutcome; reason: string }> = [];
  const registry = new AdapterRegistry(() => config.adapters, { clock, tickets: store.tickets });
  const groups = new GroupApplier({ groups: (groupsFrom ?? store).groups, incidents: store.incidents, config: () => config, clock });
  const worker = new DeliveryWorker({
    store: store.deliveries,
    adapters: () => registry.current(),
    policy: () => ({ maxRetries: 2, baseMs: 1000, maxMs: 1000 }),
    random: () => 0,
    now: () => clock.now(),
    mutes: { source: new MaintenanceWindows(() => config.maintenance), now: () => clock.now() },
    holds: new Holds([new GroupWait(() => config.grouping)]),
    groups: () => (config.grouping ? groups : null),
    observer: { settled: (d, outcome, reason) => settled.push({ adapter: d.adapter, kind: d.entry.kind, action: d.entry.action, outcome, reason }) },
  });
  const dedup = new Deduplicator({ store, config: () => config });
  return {
    clock,
    store,
    settled,
    worker,
    post: (element_id: string, root_cause_id: string) => dedup.decideIncident({ element_id, fault_class: 'LOS', root_cause_id, severity: 'MAJOR' }),
    async drain() {
      for (let n = await worker.runOnce(); n > 0; n = await worker.runOnce());
    },
    reconfigure(next: Record<string, unknown>) {
      config = configSchema.parse(next);
    },
    async close() {
      await worker.stop();
      await registry.close();
      await store.close();
    },
  };
}

const adapters = () => [
  { name: 'tickets', type: 'webhook', url: `${hook.url}/groups`, grouped: true },
  { name: 'plain', type: 'webhook', url: `${hook.url}/plain` },
];
const sent = (path: string) => hook.requests.filter((r) => r.path === path).map((r) => `${r.body.kind}:${r.body.action}`);

test('the group line is fanned out only while grouping is configured, and settles each incident change as applied', async () => {
  hook.requests.length = 0;
  const r = replica({ adapters: adapters() });
  try {
    await r.post('olt-1', 'rc-1');
    await r.drain();
    assert.deepEqual(
      r.settled.map((s) => `${s.adapter}:${s.outcome}`).sort(),
      ['plain:delivered', 'tickets:skipped'],
      'without grouping nothing goes down the group line (and the grouped adapter takes no single incident)',
    );
    r.reconfigure({ adapters: adapters(), grouping: { by: ['root_cause_id'], wait_seconds: 0 } });
    await r.post('olt-2', 'rc-1');
    await r.drain();
    const line = r.settled.filter((s) => s.adapter === GROUP_LINE);
    assert.deepEqual(
      line.map((s) => [s.kind, s.action, s.outcome, s.reason]),
      [
        ['incident', 'create', 'delivered', 'ok'],
        // The group's own create is fanned out to the group line too, which takes only incidents.
        ['group', 'create', 'skipped', 'not_for_adapter'],
      ],
    );
    assert.deepEqual(sent('/groups'), ['group:create'], 'the grouped adapter gets the group, not the member');
    assert.deepEqual(sent('/plain'), ['incident:create', 'incident:create'], 'the plain adapter gets each incident');
  } finally {
    await r.close();
  }
});

// Planted fault it catches: the mute stage placed after the group and send stages (a muted group's ticket goes out).
test("a maintenance window on the group's labels holds the group's ticket as it would an incident's; the member still joins", async () => {
  hook.requests.length = 0;
  const window = { name: 'rc-work', matchers: ['kind="group"', 'root_cause_id="rc-2"'], time_intervals: [{ weekdays: EVERY_DAY }] };
  const yaml = { adapters: adapters(), grouping: { by: ['root_cause_id'], wait_seconds: 0 }, maintenance: [window] };
  const r = replica(yaml);
  try {
    const member = await r.post('olt-3', 'rc-2');
    await r.drain();
    const gk = groupKeyOf(['rc-2']);
    assert.deepEqual(Object.keys((await r.store.groups.get('default', gk))?.members ?? {}), [member.dedup_key], 'the member joined its group');
    assert.deepEqual(sent('/plain'), ['incident:create'], 'the member itself is not in the window');
    assert.deepEqual(sent('/groups'), [], "the group's create is held by the window");
    // Held on every line it went down: the mutes are asked before a line says whether it takes the
    // entry, so the plain adapter's and the group line's copies wait too (and are skipped once let go).
    assert.equal((await r.store.deliveries.backlog()).held, 3);
    // The window goes (a reload): the held create goes out at its next look.
    r.reconfigure({ ...yaml, maintenance: [] });
    r.clock.advance(2000);
    await r.drain();
    assert.deepEqual(sent('/groups'), ['group:create']);
  } finally {
    await r.close();
  }
});

// Planted fault it catches: a failed group change settled as delivered (the member never joins, and nothing says so).
test('a group change the store refuses is retried on the backoff, then parked as a dead letter; a reload that ends grouping parks the rest', async () => {
  hook.requests.length = 0;
  const closed = new MemoryStore(manualClock());
  await closed.close();
  const yaml = { adapters: adapters(), grouping: { by: ['root_cause_id'], wait_seconds: 0 } };
  const r = replica(yaml, closed);
  try {
    await r.post('olt-4', 'rc-3');
    await r.drain();
    const line = () => r.settled.filter((s) => s.adapter === GROUP_LINE).map((s) => [s.outcome, s.reason]);
    assert.deepEqual(line(), [['retried', 'store']]);
    for (let i = 0; i < 2; i++) {
      r.clock.advance(1000);
      await r.drain();
    }
    assert.deepEqual(line(), [
      ['retried', 'store'],
      ['retried', 'store'],
      ['dead', 'exhausted'],
    ]);
    const [dead] = await r.store.deliveries.deadLetters(null, 10);
    assert.equal(dead?.adapter, GROUP_LINE);
    assert.match(dead?.attempts.at(-1)?.error ?? '', /group not updated: store is closed/);
    assert.deepEqual(sent('/groups'), [], 'no group was made');

    // Grouping ends while a change waits on the line: it is parked, saying why.
    await r.post('olt-5', 'rc-3');
    await r.store.deliveries.fanOut(['tickets', 'plain', GROUP_LINE], 1000);
    r.reconfigure({ adapters: adapters() });
    await r.drain();
    assert.deepEqual(r.settled.filter((s) => s.adapter === GROUP_LINE).at(-1)?.reason, 'not_configured');
  } finally {
    await r.close();
  }
});
