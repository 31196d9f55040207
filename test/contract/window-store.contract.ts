import { describe, test, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { manualClock, type ManualClock } from '../../src/core/clock.js';
import type { StoreFixture } from './incident-store.contract.js';

let seq = 0;

/** Windowed claims (SPC violations) on every backend. */
export function windowStoreContract(backend: string, open: (clock: ManualClock) => StoreFixture | Promise<StoreFixture>) {
  describe(`DedupStore contract: window claims on ${backend}`, () => {
    let fx: StoreFixture;
    let key: string;
    beforeEach(async () => {
      fx = await open(manualClock());
      key = `w-${process.pid}-${Date.now()}-${++seq}`;
    });
    afterEach(async () => {
      await fx.store.close();
      await fx.cleanup();
    });

    test('a claim whose outbox payload cannot be written fails whole: the window stays unclaimed', async () => {
      await assert.rejects(fx.store.windows.claim('t', key, 5 * fx.unit, { severity: 'MAJOR', summary: 's', data: { n: 1n } }), TypeError);
      assert.equal((await fx.store.queries.listOutbox()).filter((e) => e.key === key).length, 0);
      assert.equal(await fx.store.windows.claim('t', key, 5 * fx.unit), 'claimed', 'the retry claims it');
    });

    test('the first claim wins, repeats do not, until the claim expires', async () => {
      const ttl = 5 * fx.unit;
      assert.equal(await fx.store.windows.claim('t', key, ttl), 'claimed');
      assert.equal(await fx.store.windows.claim('t', key, ttl), 'repeat');
      assert.equal(await fx.store.windows.claim('u', key, ttl), 'claimed', 'tenants are separate');
      await fx.advance(ttl + fx.unit);
      assert.equal(await fx.store.windows.claim('t', key, ttl), 'claimed');
    });

    test('100 concurrent claims of one key: exactly one wins, and writes exactly one outbox entry', async () => {
      const outbox = { severity: 'CRITICAL', summary: 'SPC-BEYOND-3S on p (nelson_1)', data: { process_id: 'p', value: 13.5 } };
      const r = await Promise.all(Array.from({ length: 100 }, () => fx.store.windows.claim('t', key, 60 * fx.unit, outbox)));
      assert.equal(r.filter((c) => c === 'claimed').length, 1);
      assert.equal(r.filter((c) => c === 'repeat').length, 99);
      const mine = (await fx.store.queries.listOutbox()).filter((e) => e.key === key);
      assert.deepEqual(
        mine.map((e) => ({ tenant: e.tenant, kind: e.kind, action: e.action, severity: e.severity, summary: e.summary, data: e.data })),
        [{ tenant: 't', kind: 'violation', action: 'create', ...outbox }],
      );
    });

    test('a claim without a payload (a log-only alarm) writes nothing to the outbox', async () => {
      assert.equal(await fx.store.windows.claim('t', key, 60 * fx.unit), 'claimed');
      assert.equal((await fx.store.queries.listOutbox()).filter((e) => e.key === key).length, 0);
    });
  });
}
