import { describe, test, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { manualClock, type ManualClock } from '../../src/core/clock.js';
import type { DeviceEvent } from '../../src/core/event.js';
import type { StoreFixture } from './incident-store.contract.js';

let seq = 0;
const freshDevice = () => `term-${process.pid}-${Date.now() % 1e8}-${++seq}`;

/**
 * The adversarial device-event drill, against every backend: each case checks the
 * final state AND the notifications recorded.
 */
export function eventStoreContract(backend: string, open: (clock: ManualClock) => StoreFixture | Promise<StoreFixture>) {
  describe(`DedupStore contract: device events on ${backend}`, () => {
    let fx: StoreFixture;
    let device: string;
    let T: number;
    const ev = (sequence: number, state: string, over: Partial<DeviceEvent> = {}): DeviceEvent => ({
      tenant: 'acme',
      device,
      boot: 'boot-1',
      sequence,
      state,
      observedAt: Date.UTC(2026, 0, 1) + sequence * 1000,
      ...over,
    });
    const apply = (e: DeviceEvent, retentionMs = 600 * T) => fx.store.devices.apply(e, retentionMs);
    /** This device's transition entries in the outbox, as [sequence, from, to]. */
    const mine = async () =>
      (await fx.store.queries.listOutbox())
        .filter((n) => n.kind === 'event' && n.key === device)
        .map((n) => {
          assert.equal(n.action, 'notify');
          assert.equal(n.summary, `${device}: ${n.data.from} → ${n.data.to}`);
          return { sequence: n.data.sequence, from: n.data.from, to: n.data.to, tenant: n.tenant };
        });

    beforeEach(async () => {
      fx = await open(manualClock());
      T = fx.unit;
      device = freshDevice();
    });
    afterEach(async () => {
      await fx.store.close();
      await fx.cleanup();
    });

    test('40, 41, 41, 43: 41 applied once, the gap 42 reported; 42 late is stale; state stays at 43', async () => {
      assert.equal((await apply(ev(40, 'ONLINE'))).outcome, 'applied');
      assert.deepEqual(await apply(ev(41, 'BUSY')), { outcome: 'applied', reason: null, gap: null, transition: { from: 'ONLINE', to: 'BUSY' } });
      assert.deepEqual(await apply(ev(41, 'BUSY')), { outcome: 'duplicate', reason: null, gap: null, transition: null });
      assert.deepEqual(await apply(ev(43, 'BUSY')), { outcome: 'applied', reason: null, gap: { from: 42, to: 42 }, transition: null });
      assert.deepEqual(await apply(ev(42, 'OFFLINE')), { outcome: 'rejected', reason: 'stale_sequence', gap: null, transition: null });
      const d = await fx.store.devices.get('acme', device);
      assert.deepEqual(d && { boot: d.boot, sequence: d.sequence, state: d.state }, { boot: 'boot-1', sequence: 43, state: 'BUSY' });
      assert.deepEqual(
        (await mine()).map((n) => [n.sequence, n.from, n.to]),
        [[41, 'ONLINE', 'BUSY']],
      );
    });

    test('100 concurrent copies of one event: 1 applied, 99 duplicates, 1 notification', async () => {
      await apply(ev(1, 'ONLINE'));
      const results = await Promise.all(Array.from({ length: 100 }, () => apply(ev(2, 'OFFLINE'))));
      assert.equal(results.filter((r) => r.outcome === 'applied').length, 1);
      assert.equal(results.filter((r) => r.outcome === 'duplicate').length, 99);
      assert.equal((await mine()).length, 1);
    });

    test('a new boot restarts at sequence 1; a late event of the old boot is stale_boot', async () => {
      await apply(ev(500, 'ONLINE'));
      const reboot = await apply(ev(1, 'BOOTING', { boot: 'boot-2' }));
      assert.deepEqual(reboot, { outcome: 'applied', reason: null, gap: null, transition: { from: 'ONLINE', to: 'BOOTING' } });
      assert.equal((await apply(ev(2, 'ONLINE', { boot: 'boot-2' }))).outcome, 'applied');
      assert.deepEqual(await apply(ev(501, 'OFFLINE')), { outcome: 'rejected', reason: 'stale_boot', gap: null, transition: null });
      const d = await fx.store.devices.get('acme', device);
      assert.deepEqual(d && [d.boot, d.sequence, d.state], ['boot-2', 2, 'ONLINE']);
      assert.equal((await mine()).length, 2);
    });

    test('past the retention an old window replays as stale: nothing re-applied, nothing re-notified', async () => {
      const window = [ev(1, 'ONLINE'), ev(2, 'BUSY'), ev(3, 'ONLINE'), ev(4, 'BUSY')];
      for (const e of window) assert.equal((await apply(e, 5 * T)).outcome, 'applied');
      assert.equal((await mine()).length, 3);
      assert.ok((await Promise.all(window.map((e) => apply(e, 5 * T)))).every((r) => r.outcome === 'duplicate'));
      await fx.advance(6 * T); // the seen-markers are gone
      const replay = await Promise.all(window.map((e) => apply(e, 5 * T)));
      assert.ok(
        replay.every((r) => r.outcome === 'rejected' && r.reason === 'stale_sequence'),
        JSON.stringify(replay),
      );
      assert.equal((await mine()).length, 3);
      assert.equal((await fx.store.devices.get('acme', device))?.sequence, 4);
    });

    test("list: a tenant's devices, least recently observed first", async () => {
      const tenant = `list-${device}`;
      await apply(ev(1, 'IDLE', { tenant, device: `${device}-b`, observedAt: 2000 }));
      await apply(ev(1, 'BUSY', { tenant, device: `${device}-a`, observedAt: 1000 }));
      await apply(ev(1, 'IDLE', { tenant: `${tenant}x`, device: `${device}-c`, observedAt: 500 }));
      const got = await fx.store.queries.listDevices(tenant, 10);
      assert.deepEqual(
        got.map((d) => [d.device, d.state, d.observedAt, d.gaps]),
        [
          [`${device}-a`, 'BUSY', 1000, 0],
          [`${device}-b`, 'IDLE', 2000, 0],
        ],
      );
      await apply(ev(4, 'BUSY', { tenant, device: `${device}-a`, observedAt: 1500 })); // 2..3 missing
      await apply(ev(10, 'IDLE', { tenant, device: `${device}-a`, observedAt: 1600 })); // 5..9 missing
      await apply(ev(11, 'IDLE', { tenant, device: `${device}-a`, observedAt: 1700 }));
      assert.equal((await fx.store.queries.listDevices(tenant, 10)).find((d) => d.device === `${device}-a`)?.gaps, 7, 'missing sequence numbers in all');
      assert.equal((await fx.store.queries.listDevices(tenant, 1)).length, 1);
      const all = (await fx.store.queries.listDevices(null, 10_000)).filter((d) => d.device.startsWith(device));
      assert.deepEqual(
        all.map((d) => [d.tenant, d.device]).sort(),
        [
          [tenant, `${device}-a`],
          [tenant, `${device}-b`],
          [`${tenant}x`, `${device}-c`],
        ],
        'null: every tenant',
      );
    });

    test('the same device id under two tenants is two devices', async () => {
      await apply(ev(10, 'ONLINE'));
      assert.equal((await apply(ev(1, 'OFFLINE', { tenant: 'globex' }))).outcome, 'applied');
      assert.equal((await fx.store.devices.get('acme', device))?.state, 'ONLINE');
      assert.equal((await fx.store.devices.get('globex', device))?.state, 'OFFLINE');
      assert.equal(await fx.store.devices.get('initech', device), null);
    });

    test('stale devices are counted by their last applied observation', async () => {
      const base = Date.UTC(2030, 0, 1);
      await apply(ev(1, 'ONLINE', { observedAt: base }));
      const other = `${device}-b`;
      await fx.store.devices.apply({ tenant: 'acme', device: other, boot: 'x', sequence: 1, state: 'ONLINE', observedAt: base + 60_000 }, 60_000);
      const before = await fx.store.queries.countStaleDevices(base + 30_000);
      const none = await fx.store.queries.countStaleDevices(base);
      assert.equal(before - none, 1, 'exactly the first device is older than the cut-off');
      assert.equal((await fx.store.queries.countStaleDevices(base + 120_000)) - none, 2);
    });
  });
}
