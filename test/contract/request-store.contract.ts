import { afterEach, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { manualClock, type ManualClock } from '../../src/core/clock.js';
import type { StoreFixture } from './incident-store.contract.js';

let seq = 0;
const answer = (n: number) => ({
  status: 200,
  contentType: 'application/json; charset=utf-8',
  body: JSON.stringify({ decision: 'CREATE', n, text: 'ünïcode ✓' }),
});

/** Producers' Idempotency-Keys on every backend. */
export function requestStoreContract(backend: string, open: (clock: ManualClock) => StoreFixture | Promise<StoreFixture>) {
  describe(`DedupStore contract: request idempotency on ${backend}`, () => {
    let fx: StoreFixture;
    let key: string;
    beforeEach(async () => {
      fx = await open(manualClock());
      key = `idem-${process.pid}-${Date.now()}-${++seq}`;
    });
    afterEach(async () => {
      await fx.store.close();
      await fx.cleanup();
    });

    test('the first begin runs the request; until it finishes the key is in flight; then its answer is kept', async () => {
      const r = fx.store.requests;
      assert.deepEqual(await r.begin('t', key, 'h1', 60 * fx.unit), { state: 'new' });
      assert.deepEqual(await r.begin('t', key, 'h1', 60 * fx.unit), { state: 'in_flight', bodyHash: 'h1' });
      assert.deepEqual(await r.begin('t', key, 'h2', 60 * fx.unit), { state: 'in_flight', bodyHash: 'h1' }, 'another body sees the first one');
      assert.deepEqual(await r.begin('u', key, 'h9', 60 * fx.unit), { state: 'new' }, 'tenants are separate');
      await r.finish('t', key, 'h1', answer(1), 60 * fx.unit);
      assert.deepEqual(await r.begin('t', key, 'h1', 60 * fx.unit), { state: 'done', bodyHash: 'h1', answer: answer(1) });
      assert.deepEqual(await r.begin('t', key, 'h2', 60 * fx.unit), { state: 'done', bodyHash: 'h1', answer: answer(1) });
    });

    test('an abandoned request frees its key; a finished one cannot be abandoned, nor another body’s', async () => {
      const r = fx.store.requests;
      assert.equal((await r.begin('t', key, 'h1', 60 * fx.unit)).state, 'new');
      await r.abandon('t', key, 'h2');
      assert.equal((await r.begin('t', key, 'h1', 60 * fx.unit)).state, 'in_flight', 'not freed by another body');
      await r.abandon('t', key, 'h1');
      assert.equal((await r.begin('t', key, 'h1', 60 * fx.unit)).state, 'new', 'freed');
      await r.finish('t', key, 'h1', answer(2), 60 * fx.unit);
      await r.abandon('t', key, 'h1');
      assert.equal((await r.begin('t', key, 'h1', 60 * fx.unit)).state, 'done', 'an answer stays');
    });

    test('a lease and a kept answer end with their lifetimes', async () => {
      const r = fx.store.requests;
      assert.equal((await r.begin('t', key, 'h1', 5 * fx.unit)).state, 'new');
      await fx.advance(6 * fx.unit);
      assert.equal((await r.begin('t', key, 'h1', 5 * fx.unit)).state, 'new', 'a request whose replica died frees its key after the lease');
      await r.finish('t', key, 'h1', answer(3), 5 * fx.unit);
      await fx.advance(6 * fx.unit);
      assert.equal((await r.begin('t', key, 'h2', 5 * fx.unit)).state, 'new', 'an answer is forgotten after its lifetime');
    });

    test('50 concurrent begins of one key: exactly one runs', async () => {
      const all = await Promise.all(Array.from({ length: 50 }, () => fx.store.requests.begin('t', key, 'h', 60 * fx.unit)));
      assert.equal(all.filter((b) => b.state === 'new').length, 1);
      assert.equal(all.filter((b) => b.state === 'in_flight').length, 49);
    });
  });
}
