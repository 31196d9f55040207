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

/** No bound in the way of the tests that are not about it. */
const MANY_KEYS = 1_000_000;
const MANY_BYTES = 1_000_000_000;
/** An answer as the HTTP layer hands it over: whole, with a small digest form beside it. */
const kept = (a: ReturnType<typeof answer>) => ({ whole: a, digest: { status: a.status, contentType: a.contentType, body: '{"replayed":"digest"}' } });

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
      assert.deepEqual(await r.begin('t', key, 'h1', 60 * fx.unit, MANY_KEYS), { state: 'new' });
      assert.deepEqual(await r.begin('t', key, 'h1', 60 * fx.unit, MANY_KEYS), { state: 'in_flight', bodyHash: 'h1' });
      assert.deepEqual(await r.begin('t', key, 'h2', 60 * fx.unit, MANY_KEYS), { state: 'in_flight', bodyHash: 'h1' }, 'another body sees the first one');
      assert.deepEqual(await r.begin('u', key, 'h9', 60 * fx.unit, MANY_KEYS), { state: 'new' }, 'tenants are separate');
      await r.finish('t', key, 'h1', kept(answer(1)), 60 * fx.unit, MANY_BYTES);
      assert.deepEqual(await r.begin('t', key, 'h1', 60 * fx.unit, MANY_KEYS), { state: 'done', bodyHash: 'h1', answer: answer(1) });
      assert.deepEqual(await r.begin('t', key, 'h2', 60 * fx.unit, MANY_KEYS), { state: 'done', bodyHash: 'h1', answer: answer(1) });
    });

    test('an abandoned request frees its key; a finished one cannot be abandoned, nor another body’s', async () => {
      const r = fx.store.requests;
      assert.equal((await r.begin('t', key, 'h1', 60 * fx.unit, MANY_KEYS)).state, 'new');
      await r.abandon('t', key, 'h2');
      assert.equal((await r.begin('t', key, 'h1', 60 * fx.unit, MANY_KEYS)).state, 'in_flight', 'not freed by another body');
      await r.abandon('t', key, 'h1');
      assert.equal((await r.begin('t', key, 'h1', 60 * fx.unit, MANY_KEYS)).state, 'new', 'freed');
      await r.finish('t', key, 'h1', kept(answer(2)), 60 * fx.unit, MANY_BYTES);
      await r.abandon('t', key, 'h1');
      assert.equal((await r.begin('t', key, 'h1', 60 * fx.unit, MANY_KEYS)).state, 'done', 'an answer stays');
    });

    test('a lease and a kept answer end with their lifetimes', async () => {
      const r = fx.store.requests;
      assert.equal((await r.begin('t', key, 'h1', 5 * fx.unit, MANY_KEYS)).state, 'new');
      await fx.advance(6 * fx.unit);
      assert.equal((await r.begin('t', key, 'h1', 5 * fx.unit, MANY_KEYS)).state, 'new', 'a request whose replica died frees its key after the lease');
      await r.finish('t', key, 'h1', kept(answer(3)), 5 * fx.unit, MANY_BYTES);
      await fx.advance(6 * fx.unit);
      assert.equal((await r.begin('t', key, 'h2', 5 * fx.unit, MANY_KEYS)).state, 'new', 'an answer is forgotten after its lifetime');
    });

    test('50 concurrent begins of one key: exactly one runs', async () => {
      const all = await Promise.all(Array.from({ length: 50 }, () => fx.store.requests.begin('t', key, 'h', 60 * fx.unit, MANY_KEYS)));
      assert.equal(all.filter((b) => b.state === 'new').length, 1);
      assert.equal(all.filter((b) => b.state === 'in_flight').length, 49);
    });

    test('a tenant holds at most its bound of keys: a new one past it is refused and recorded nowhere; others and repeats go on', async () => {
      const r = fx.store.requests;
      const k = (i: number) => `${key}-${i}`;
      for (let i = 0; i < 3; i++) assert.equal((await r.begin('t', k(i), 'h', 60 * fx.unit, 3)).state, 'new');
      assert.deepEqual(await r.begin('t', k(3), 'h', 60 * fx.unit, 3), { state: 'full' }, 'the fourth key is refused');
      assert.deepEqual(await r.begin('t', k(3), 'h', 60 * fx.unit, 3), { state: 'full' }, 'and was not recorded by the refusal');
      assert.deepEqual(await r.begin('t', k(1), 'h', 60 * fx.unit, 3), { state: 'in_flight', bodyHash: 'h' }, 'a held key still answers');
      assert.equal((await r.begin('u', k(3), 'h', 60 * fx.unit, 3)).state, 'new', 'another tenant has its own bound');
      await r.finish('t', k(0), 'h', kept(answer(4)), 60 * fx.unit, MANY_BYTES);
      assert.deepEqual(await r.begin('t', k(3), 'h', 60 * fx.unit, 3), { state: 'full' }, 'an answered key still counts');
      await r.abandon('t', k(2), 'h');
      assert.equal((await r.begin('t', k(3), 'h', 60 * fx.unit, 3)).state, 'new', 'an abandoned key frees its place');
      assert.deepEqual(await r.begin('t', k(4), 'h', 60 * fx.unit, 3), { state: 'full' });
    });

    test('60 concurrent begins of distinct keys under a bound of 10: exactly 10 run', async () => {
      const all = await Promise.all(Array.from({ length: 60 }, (_, i) => fx.store.requests.begin('t', `${key}-${i}`, 'h', 60 * fx.unit, 10)));
      assert.equal(all.filter((b) => b.state === 'new').length, 10);
      assert.equal(all.filter((b) => b.state === 'full').length, 50);
    });

    test('a key past its lifetime frees its place in the bound once it is swept', async () => {
      const r = fx.store.requests;
      const k = (i: number) => `${key}-${i}`;
      for (let i = 0; i < 2; i++) assert.equal((await r.begin('t', k(i), 'h', 5 * fx.unit, 2)).state, 'new');
      assert.deepEqual(await r.begin('t', k(2), 'h', 5 * fx.unit, 2), { state: 'full' });
      await fx.advance(6 * fx.unit);
      await fx.store.sweepExpired();
      assert.equal((await r.begin('t', k(2), 'h', 5 * fx.unit, 2)).state, 'new', 'expired keys no longer count');
      assert.equal((await r.begin('t', k(0), 'h', 5 * fx.unit, 2)).state, 'new', 'an expired key of its own is taken over in place');
      assert.deepEqual(await r.begin('t', k(5), 'h', 5 * fx.unit, 2), { state: 'full' });
    });

    test("an answer that would pass the tenant's bytes is kept as its digest; freed bytes make room again", async () => {
      const r = fx.store.requests;
      const k = (i: number) => `${key}-${i}`;
      const big = { status: 200, contentType: 'application/json', body: JSON.stringify({ pad: 'é'.repeat(300) }) }; // 612 bytes (é is two)
      const small = { status: 200, contentType: 'application/json', body: '{"d":1}' };
      const both = { whole: big, digest: small };
      for (let i = 0; i < 3; i++) assert.equal((await r.begin('t', k(i), 'h', 60 * fx.unit, MANY_KEYS)).state, 'new');
      assert.equal(await r.finish('t', k(0), 'h', both, 60 * fx.unit, 1000), 'whole');
      assert.equal(await r.finish('t', k(1), 'h', both, 60 * fx.unit, 1000), 'digest', '612 + 612 bytes pass 1000');
      assert.deepEqual(await r.begin('t', k(1), 'h', 60 * fx.unit, MANY_KEYS), { state: 'done', bodyHash: 'h', answer: small }, 'the digest is what replays');
      assert.deepEqual(await r.begin('t', k(0), 'h', 60 * fx.unit, MANY_KEYS), { state: 'done', bodyHash: 'h', answer: big });
      assert.equal(await r.finish('u', k(2), 'h', both, 60 * fx.unit, 1000), 'whole', "another tenant's bytes are its own");
      assert.equal(await r.finish('t', k(0), 'h', { whole: small, digest: small }, 60 * fx.unit, 1000), 'whole', 'a key answered again frees its old bytes');
      assert.equal(await r.finish('t', k(2), 'h', both, 60 * fx.unit, 1000), 'whole', '7 + 7 + 612 bytes fit');
    });
  });
}
