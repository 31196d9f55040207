import { afterEach, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { manualClock, type ManualClock } from '../../src/core/clock.js';
import type { HistoryAppend } from '../../src/store/contract/index.js';
import type { StoreFixture } from './incident-store.contract.js';

let seq = 0;
const T0 = 1_800_000_000_000;
const LIMITS = { maxEvents: 50, keepMs: 600_000 };

/** Each key's history, on every backend: order, folding, bounds, tenants. */
export function historyStoreContract(backend: string, open: (clock: ManualClock) => StoreFixture | Promise<StoreFixture>) {
  describe(`DedupStore contract: key history on ${backend}`, () => {
    let fx: StoreFixture;
    let key: string;
    beforeEach(async () => {
      fx = await open(manualClock());
      key = `dedup:hist-${process.pid}-${Date.now()}-${++seq}`;
    });
    afterEach(async () => {
      await fx.store.close();
      await fx.cleanup();
    });

    const suppress = (at: number, k = key, tenant = 'acme'): HistoryAppend => ({
      tenant,
      key: k,
      event: { at, type: 'decision', decision: 'SUPPRESS', reason: 'duplicate' },
      fold: 'SUPPRESS:f1',
    });

    test('events come back oldest first; a SUPPRESS run folds into one event; keys and tenants are separate', async () => {
      const h = fx.store.history;
      assert.deepEqual(await h.read('acme', key), []);
      await h.append([{ tenant: 'acme', key, event: { at: T0, type: 'decision', decision: 'CREATE', labels: { a: 'ü "x"' } } }], LIMITS);
      await h.append([suppress(T0 + 10), suppress(T0 + 30)], LIMITS);
      await h.append([suppress(T0 + 100), suppress(T0 + 20, `${key}x`), suppress(T0 + 40, key, 'beta')], LIMITS);
      await h.append([{ tenant: 'acme', key, event: { at: T0 + 200, type: 'decision', decision: 'UPDATE' } }, suppress(T0 + 210)], LIMITS);
      assert.deepEqual(await h.read('acme', key), [
        { at: T0, type: 'decision', decision: 'CREATE', labels: { a: 'ü "x"' } },
        { at: T0 + 10, type: 'decision', decision: 'SUPPRESS', reason: 'duplicate', count: 3, first_at: T0 + 10, last_at: T0 + 100, max_gap_ms: 70 },
        { at: T0 + 200, type: 'decision', decision: 'UPDATE' },
        { at: T0 + 210, type: 'decision', decision: 'SUPPRESS', reason: 'duplicate', count: 1, first_at: T0 + 210, last_at: T0 + 210, max_gap_ms: 0 },
      ]);
      assert.equal((await h.read('acme', `${key}x`)).length, 1);
      assert.equal((await h.read('beta', key)).length, 1);
      assert.deepEqual(await h.read('gamma', key), []);
    });

    test('a run folded before the store counts as its arrivals, and its gap against the stored run', async () => {
      const h = fx.store.history;
      await h.append([suppress(T0)], LIMITS);
      await h.append([{ ...suppress(T0 + 500), run: { count: 4, first_at: T0 + 500, last_at: T0 + 560, max_gap_ms: 30 } }], LIMITS);
      const [e] = await h.read('acme', key);
      assert.deepEqual([e!.count, e!.first_at, e!.last_at, e!.max_gap_ms], [5, T0, T0 + 560, 500]);
    });

    test("a tenant's events hold at most maxTenantBytes: past it an event is not kept (and counted), another tenant is not touched, and trimming frees room", async () => {
      const h = fx.store.history;
      const [a, b] = [`ta-${seq}`, `tb-${seq}`];
      // Redis keeps the bound per shard, each its share: one key per tenant here, so one shard's share is what binds.
      type Layered = { layout?: { shards: number }; inner?: { layout?: { shards: number } } };
      const shards = (fx.store as Layered).layout?.shards ?? (fx.store as Layered).inner?.layout?.shards ?? 1;
      const body = 'x'.repeat(1000);
      const event = (tenant: string, at: number, k = key): HistoryAppend => ({
        tenant,
        key: k,
        event: { at, type: 'decision', decision: 'UPDATE', note: body },
      });
      // About 1 KiB an event (the Redis element a few bytes more): the share holds three, not four.
      const limits = { maxEvents: 5, keepMs: 600_000, maxTenantBytes: 3500 * shards };
      const kept = async (tenant: string) => (await h.read(tenant, key)).length;
      assert.deepEqual(await h.append([event(a, T0), event(a, T0 + 1), event(a, T0 + 2)], limits), { overTenantBytes: 0 });
      assert.deepEqual(await h.append([event(a, T0 + 3), event(a, T0 + 4)], limits), { overTenantBytes: 2 }, 'past the bound: not kept, counted');
      assert.equal(await kept(a), 3);
      assert.deepEqual(await h.append([event(b, T0 + 5)], limits), { overTenantBytes: 0 }, 'another tenant has its own bound');
      assert.equal(await kept(b), 1);
      // A run folding into a kept event adds no bytes: it is counted in, bound or not.
      await h.append([suppress(T0 + 6, `${key}-run`, b)], limits);
      assert.deepEqual(await h.append([suppress(T0 + 7, `${key}-run`, b), suppress(T0 + 8, `${key}-run`, b)], limits), { overTenantBytes: 0 });
      // Room comes back as events go: a smaller per-key bound trims the oldest, and the next event fits.
      const fewer = { ...limits, maxEvents: 1 };
      assert.deepEqual(await h.append([event(a, T0 + 9)], fewer), { overTenantBytes: 1 }, 'no room before a trim');
      assert.deepEqual(await h.append([suppress(T0 + 10, key, a)], fewer), { overTenantBytes: 0 }, 'a small event fits; the trim to one event frees the rest');
      assert.deepEqual(await h.append([event(a, T0 + 11), event(a, T0 + 12)], limits), { overTenantBytes: 0 });
      assert.equal(await kept(a), 3);
    });

    test('a key keeps its newest maxEvents events, and drops those past their time', async () => {
      const h = fx.store.history;
      const limits = { maxEvents: 5, keepMs: 1000 };
      // Each event recorded at its own time: a store may drop the close at the next append or leave it to the sweep, but
      // no read past its time answers it.
      fx.clock?.set(T0);
      await h.append([{ tenant: 'acme', key, event: { at: T0, type: 'closed' } }], limits);
      fx.clock?.set(T0 + 1500);
      await h.append([{ tenant: 'acme', key, event: { at: T0 + 1500, type: 'decision', decision: 'CREATE' } }], limits);
      assert.deepEqual(
        (await h.read('acme', key)).map((e) => e.type),
        ['decision'],
        'the close fell out of its time',
      );
      const many: HistoryAppend[] = Array.from({ length: 12 }, (_, i) => ({ tenant: 'acme', key, event: { at: T0 + 1600 + i, type: 'released', n: i } }));
      await h.append(many, limits);
      const kept = await h.read('acme', key);
      assert.deepEqual(
        kept.map((e) => e.n),
        [7, 8, 9, 10, 11],
        'the newest five',
      );
    });

    test('keysSince finds the keys with an event at or after a time, tenant and key as given, at most the limit', async () => {
      const h = fx.store.history;
      const odd = `${key}/ü ,"x"`;
      await h.append([{ tenant: 'acme', key, event: { at: T0, type: 'closed' } }], LIMITS);
      await h.append([suppress(T0 + 100, odd, 'bé ta'), suppress(T0 + 400, odd, 'bé ta')], LIMITS);
      await h.append([{ tenant: 'acme', key: `${key}-late`, event: { at: T0 + 300, type: 'closed' } }], LIMITS);
      const ours = (since: number) =>
        h.keysSince(since, 100_000).then((ks) =>
          ks
            .filter((k) => k.key.startsWith(key))
            .map((k) => `${k.tenant}|${k.key}`)
            .sort(),
        );
      assert.deepEqual(await ours(T0), [`acme|${key}`, `acme|${key}-late`, `bé ta|${odd}`]);
      assert.deepEqual(await ours(T0 + 301), [`bé ta|${odd}`], 'a run counts by its last arrival');
      assert.deepEqual(await ours(T0 + 401), []);
      assert.equal((await h.keysSince(T0, 1)).length, 1, 'at most the limit');
    });
  });
}
