import { afterEach, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { manualClock, type ManualClock } from '../../src/core/clock.js';
import type { TicketOwner } from '../../src/store/contract/index.js';
import type { StoreFixture } from './incident-store.contract.js';

let seq = 0;

/** Which ticket a receiver opened for a key, on every backend. */
export function ticketStoreContract(backend: string, open: (clock: ManualClock) => StoreFixture | Promise<StoreFixture>) {
  describe(`DedupStore contract: ticket ids on ${backend}`, () => {
    let fx: StoreFixture;
    let owner: TicketOwner;
    beforeEach(async () => {
      fx = await open(manualClock());
      owner = { adapter: 'jira', tenant: 'acme', kind: 'incident', key: `dedup:${process.pid}-${Date.now()}-${++seq}` };
    });
    afterEach(async () => {
      await fx.store.close();
      await fx.cleanup();
    });

    test('the first claim holds; a later one answers it; find reads it; owners are separate', async () => {
      const t = fx.store.tickets;
      assert.equal(await t.find(owner, 60 * fx.unit), null);
      assert.equal(await t.claim(owner, 'OPS-1', 60 * fx.unit), 'OPS-1');
      assert.equal(await t.claim(owner, 'OPS-2', 60 * fx.unit), 'OPS-1', 'a later claim gets the holder');
      assert.equal(await t.find(owner, 60 * fx.unit), 'OPS-1');
      for (const other of [
        { ...owner, adapter: 'jira2' },
        { ...owner, tenant: 'Acme' },
        { ...owner, kind: 'violation' as const },
        { ...owner, key: `${owner.key}x` },
      ]) {
        assert.equal(await t.find(other, 60 * fx.unit), null, JSON.stringify(other));
        assert.equal(await t.claim(other, 'OPS-9', 60 * fx.unit), 'OPS-9', JSON.stringify(other));
      }
      assert.equal(await t.find(owner, 60 * fx.unit), 'OPS-1', 'the others left it alone');
    });

    test('forget removes only the id it names', async () => {
      const t = fx.store.tickets;
      await t.claim(owner, 'OPS-1', 60 * fx.unit);
      await t.forget(owner, 'OPS-2');
      assert.equal(await t.find(owner, 60 * fx.unit), 'OPS-1', 'not forgotten by another id');
      await t.forget(owner, 'OPS-1');
      assert.equal(await t.find(owner, 60 * fx.unit), null);
      assert.equal(await t.claim(owner, 'OPS-3', 60 * fx.unit), 'OPS-3', 'a new claim holds after a forget');
    });

    test('an id ends with its lifetime; a find or a claim keeps it longer', async () => {
      const t = fx.store.tickets;
      await t.claim(owner, 'OPS-1', 5 * fx.unit);
      await fx.advance(3 * fx.unit);
      assert.equal(await t.find(owner, 5 * fx.unit), 'OPS-1');
      await fx.advance(3 * fx.unit);
      assert.equal(await t.claim(owner, 'OPS-2', 5 * fx.unit), 'OPS-1', 'kept by the find');
      await fx.advance(3 * fx.unit);
      assert.equal(await t.find(owner, 5 * fx.unit), 'OPS-1', 'kept by the claim');
      await fx.advance(6 * fx.unit);
      assert.equal(await t.find(owner, 5 * fx.unit), null, 'gone after a lifetime unused');
      assert.equal(await t.claim(owner, 'OPS-2', 5 * fx.unit), 'OPS-2', 'an expired id does not hold');
    });

    test('20 concurrent claims of one owner, each with its own id: all answer the same one, which is one of theirs', async () => {
      const ids = Array.from({ length: 20 }, (_, i) => `OPS-${i + 1}`);
      const all = await Promise.all(ids.map((id) => fx.store.tickets.claim(owner, id, 60 * fx.unit)));
      assert.equal(new Set(all).size, 1, all.join(','));
      assert.ok(ids.includes(all[0]!));
      assert.equal(await fx.store.tickets.find(owner, 60 * fx.unit), all[0]);
    });
  });
}
