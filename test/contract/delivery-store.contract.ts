import { describe, test, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { manualClock, type ManualClock } from '../../src/core/clock.js';
import type { Delivery } from '../../src/store/contract/index.js';
import type { StoreFixture } from './incident-store.contract.js';

let seq = 0;
const payload = { severity: 'CRITICAL', summary: 'SPC-BEYOND-3S on p (nelson_1)', data: { process_id: 'p', value: 13.5 } };

/** Delivery state (fan-out, leases, retries, dead letters, re-queue on re-fire) on every backend. */
export function deliveryStoreContract(backend: string, open: (clock: ManualClock) => StoreFixture | Promise<StoreFixture>) {
  describe(`DeliveryStore contract on ${backend}`, () => {
    let fx: StoreFixture;
    let prefix: string;
    let T: number;
    const key = (i: number) => `${prefix}-${i}`;
    /** Leases and keeps this test's deliveries; a shared server may hold others', which are settled out of the way. */
    const lease = async (owner = 'w1', leaseMs = 10 * T): Promise<Delivery[]> => {
      const got = await fx.store.deliveries.leaseDue(owner, leaseMs, 1000);
      const mine = got.filter((d) => d.entry.key.startsWith(prefix));
      for (const d of got) if (!mine.includes(d)) await fx.store.deliveries.settle(d, { outcome: 'delivered' });
      return mine.sort((a, b) => a.entry.key.localeCompare(b.entry.key) || a.adapter.localeCompare(b.adapter));
    };
    const fanOutAll = async (adapters: string[]) => {
      while ((await fx.store.deliveries.fanOut(adapters, 1000)) > 0);
    };

    beforeEach(async () => {
      fx = await open(manualClock());
      T = fx.unit;
      prefix = `d${process.pid}x${Date.now()}x${++seq}`;
      await fanOutAll(['old']);
      await lease();
    });
    afterEach(async () => {
      await fx.store.close();
      await fx.cleanup();
    });

    test('fan-out: one pending delivery per adapter, the outbox emptied, n counting each key and action', async () => {
      assert.equal(await fx.store.windows.claim('t', key(1), 60 * T, payload), 'claimed');
      await fx.store.incidents.decide({ tenant: 't', key: key(2), fingerprint: 'MAJOR|0', ttlMs: 60 * T, outbox: payload });
      await fx.store.incidents.close('t', key(2));
      await fx.store.incidents.decide({ tenant: 't', key: key(2), fingerprint: 'MAJOR|0', ttlMs: 60 * T, outbox: payload });
      await fanOutAll(['hook', 'snow']);
      assert.equal((await fx.store.queries.listOutbox()).filter((e) => e.key.startsWith(prefix)).length, 0, 'the outbox is emptied');
      // One key's deliveries to one adapter go out one at a time, oldest first: drain lease by lease.
      const got: Delivery[] = [];
      const rounds: string[][] = [];
      for (let batch = await lease(); batch.length > 0; batch = await lease()) {
        rounds.push(batch.map((d) => `${d.entry.key === key(1) ? 'v' : 'i'}:${d.entry.action}${d.n}.${d.adapter}`).sort());
        for (const d of batch) assert.ok(await fx.store.deliveries.settle(d, { outcome: 'delivered' }));
        got.push(...batch);
      }
      assert.deepEqual(rounds, [
        ['i:create1.hook', 'i:create1.snow', 'v:create1.hook', 'v:create1.snow'],
        ['i:close1.hook', 'i:close1.snow'],
        ['i:create2.hook', 'i:create2.snow'],
      ]);
      const tuples = (rows: unknown[][]) => rows.map((r) => JSON.stringify(r)).sort();
      assert.deepEqual(
        tuples(got.map((d) => [d.entry.key, d.entry.kind, d.entry.action, d.adapter, d.n, d.retries, d.status])),
        tuples([
          [key(1), 'violation', 'create', 'hook', 1, 0, 'pending'],
          [key(1), 'violation', 'create', 'snow', 1, 0, 'pending'],
          [key(2), 'incident', 'create', 'hook', 1, 0, 'pending'],
          [key(2), 'incident', 'create', 'hook', 2, 0, 'pending'],
          [key(2), 'incident', 'close', 'hook', 1, 0, 'pending'],
          [key(2), 'incident', 'create', 'snow', 1, 0, 'pending'],
          [key(2), 'incident', 'create', 'snow', 2, 0, 'pending'],
          [key(2), 'incident', 'close', 'snow', 1, 0, 'pending'],
        ]),
      );
      const v = got.find((d) => d.entry.key === key(1))!;
      assert.deepEqual({ ...v.entry, at: 0 }, { tenant: 't', kind: 'violation', action: 'create', key: key(1), ...payload, at: 0 });
      assert.equal(new Set(got.map((d) => d.id)).size, got.length, 'ids are unique');
    });

    test("fan-out goes by each entry's route: only the adapters it names, every internal line, every adapter when it has none", async () => {
      const routed = { ...payload, route: ['snow', 'gone'] };
      assert.equal(await fx.store.windows.claim('t', key(1), 60 * T, routed), 'claimed');
      await fx.store.incidents.decide({ tenant: 't', key: key(2), fingerprint: 'MAJOR|0', ttlMs: 60 * T, outbox: { ...payload, route: ['hook'] } });
      await fx.store.incidents.decide({ tenant: 't', key: key(2), fingerprint: 'CRITICAL|0', ttlMs: 60 * T, outbox: { ...payload, route: ['snow'] } });
      await fx.store.incidents.close('t', key(2));
      await fx.store.devices.apply({ tenant: 't', device: key(3), boot: 'b', sequence: 1, state: 'UP', observedAt: 1 }, 60 * T);
      await fx.store.devices.apply({ tenant: 't', device: key(3), boot: 'b', sequence: 2, state: 'DOWN', observedAt: 2 }, 60 * T, undefined, ['jira']);
      await fx.store.incidents.decide({ tenant: 't', key: key(4), fingerprint: 'MAJOR|0', ttlMs: 60 * T, outbox: payload });
      await fanOutAll(['hook', 'snow', 'jira', '@group']);
      const got: string[] = [];
      for (let batch = await lease(); batch.length > 0; batch = await lease()) {
        for (const d of batch) {
          got.push(`${d.entry.key.slice(prefix.length + 1)}:${d.entry.action}>${d.adapter}`);
          assert.ok(await fx.store.deliveries.settle(d, { outcome: 'delivered' }));
        }
      }
      assert.deepEqual(got.sort(), [
        '1:create>@group',
        '1:create>snow',
        '2:close>@group',
        '2:close>hook',
        '2:create>@group',
        '2:create>hook',
        '2:update>@group',
        '2:update>hook',
        '3:notify>@group',
        '3:notify>jira',
        '4:create>@group',
        '4:create>hook',
        '4:create>jira',
        '4:create>snow',
      ]);
    });

    test('a pass near some keys answers theirs; one that names none answers the rest: the hint loses nothing', async () => {
      // Keys in different parts of the store (on Redis, 40 keys fill most of 64 shards).
      for (let i = 0; i < 40; i++) await fx.store.incidents.decide({ tenant: 't', key: key(i), fingerprint: 'MAJOR|0', ttlMs: 60 * T, outbox: payload });
      const near = [{ kind: 'incident' as const, tenant: 't', key: key(7) }];
      while ((await fx.store.deliveries.fanOut(['hook'], 1000, near)) > 0);
      const first = (await fx.store.deliveries.leaseDue('w1', 10 * T, 1000, near)).filter((d) => d.entry.key.startsWith(prefix));
      assert.ok(
        first.some((d) => d.entry.key === key(7)),
        'the key named is fanned out and leased',
      );
      await fanOutAll(['hook']);
      const rest = await lease();
      const all = new Set([...first, ...rest].map((d) => d.entry.key));
      assert.equal(all.size, 40, 'every key is leased once, by the pass near it or by the next');
      assert.equal(first.length + rest.length, 40, 'and none twice');
    });

    test('with no adapters the outbox is consumed and nothing is due', async () => {
      await fx.store.windows.claim('t', key(1), 60 * T, payload);
      await fanOutAll([]);
      assert.equal((await fx.store.queries.listOutbox()).filter((e) => e.key.startsWith(prefix)).length, 0);
      assert.deepEqual(await lease(), []);
    });

    test('a lease hides a delivery until it runs out; then another worker takes it and the first cannot settle', async () => {
      await fx.store.windows.claim('t', key(1), 60 * T, payload);
      await fanOutAll(['hook']);
      const [first] = await lease('w1', 3 * T);
      assert.ok(first);
      assert.deepEqual(await lease('w2'), [], 'leased: not handed out twice');
      await fx.advance(4 * T);
      const [second] = await lease('w2');
      assert.equal(second?.id, first.id);
      assert.notEqual(second.lease, first.lease);
      assert.equal(await fx.store.deliveries.settle(first, { outcome: 'delivered' }), false, 'a lost lease cannot settle');
      assert.equal(await fx.store.deliveries.settle(second, { outcome: 'delivered' }), true);
      await fx.advance(20 * T);
      assert.deepEqual(await lease('w3'), [], 'delivered: gone');
    });

    test('100 concurrent leases of 20 deliveries hand each out exactly once', async () => {
      for (let i = 0; i < 20; i++) await fx.store.windows.claim('t', key(i), 60 * T, payload);
      await fanOutAll(['hook']);
      const peer = fx.openPeer ? await fx.openPeer() : fx.store;
      try {
        const all = await Promise.all(Array.from({ length: 100 }, (_, i) => (i % 2 ? peer : fx.store).deliveries.leaseDue(`w${i}`, 60 * T, 3)));
        const mine = all.flat().filter((d) => d.entry.key.startsWith(prefix));
        assert.equal(mine.length, 20);
        assert.equal(new Set(mine.map((d) => d.id)).size, 20);
      } finally {
        if (peer !== fx.store) await peer.close();
      }
    });

    test('retry: not due before its delay, attempts recorded; dead: listed, not due, retried on request', async () => {
      await fx.store.windows.claim('acme', key(1), 60 * T, payload);
      await fanOutAll(['hook']);
      const [d] = await lease();
      assert.equal(await fx.store.deliveries.settle(d!, { outcome: 'retry', delayMs: 5 * T, error: 'HTTP 503' }), true);
      assert.deepEqual(await lease(), [], 'not before the delay');
      await fx.advance(6 * T);
      const [again] = await lease();
      assert.equal(again?.id, d!.id);
      assert.equal(again.retries, 1);
      assert.deepEqual(
        again.attempts.map((a) => a.error),
        ['HTTP 503'],
      );
      assert.equal(await fx.store.deliveries.settle(again, { outcome: 'dead', error: 'HTTP 400: bad field' }), true);
      assert.deepEqual(await lease(), []);
      const dead = (await fx.store.deliveries.deadLetters(null, 1000)).filter((x) => x.entry.key.startsWith(prefix));
      assert.equal(dead.length, 1);
      assert.equal(dead[0]!.id, d!.id);
      assert.equal(dead[0]!.status, 'dead');
      assert.deepEqual(
        dead[0]!.attempts.map((a) => a.error),
        ['HTTP 503', 'HTTP 400: bad field'],
      );
      assert.ok(dead[0]!.attempts.every((a) => typeof a.at === 'number' && a.at > 0));
      assert.deepEqual(dead[0]!.entry.data, payload.data, 'the payload is kept');
      assert.equal((await fx.store.deliveries.deadLetters('other', 1000)).filter((x) => x.entry.key.startsWith(prefix)).length, 0);
      assert.equal(await fx.store.deliveries.retryDeadLetter('other', d!.id), false, "another tenant's dead letter is not there");
      assert.equal(await fx.store.deliveries.retryDeadLetter(null, 'no-such-id'), false);
      assert.equal(await fx.store.deliveries.retryDeadLetter('acme', d!.id), true);
      assert.equal(await fx.store.deliveries.retryDeadLetter('acme', d!.id), false, 'no longer dead');
      const [back] = await lease();
      assert.equal(back?.id, d!.id);
      assert.equal(back.retries, 0, 'a fresh retry budget');
      assert.equal(back.attempts.length, 2, 'the history stays');
      assert.equal(await fx.store.deliveries.settle(back, { outcome: 'delivered' }), true);
      assert.equal((await fx.store.deliveries.deadLetters(null, 1000)).filter((x) => x.entry.key.startsWith(prefix)).length, 0);
    });

    test("a window's repeat re-queues its failing deliveries (retrying or dead) instead of suppressing", async () => {
      assert.equal(await fx.store.windows.claim('t', key(1), 600 * T, payload), 'claimed');
      await fanOutAll(['hook', 'mes']);
      assert.equal(await fx.store.windows.claim('t', key(1), 600 * T, payload), 'repeat', 'queued, not failing: a plain repeat');
      const [hook, mes] = await lease();
      assert.equal(hook!.adapter, 'hook');
      await fx.store.deliveries.settle(hook!, { outcome: 'delivered' });
      await fx.store.deliveries.settle(mes!, { outcome: 'retry', delayMs: 300 * T, error: 'timeout' });
      assert.equal(await fx.store.windows.claim('t', key(1), 600 * T, payload), 'requeued');
      const [requeued] = await lease();
      assert.equal(requeued?.id, mes!.id, 'only the failed adapter, due now');
      assert.equal(await fx.store.windows.claim('t', key(1), 600 * T, payload), 'repeat', 'leased now: not re-queued under its worker');
      await fx.store.deliveries.settle(requeued, { outcome: 'dead', error: 'HTTP 500' });
      assert.equal(await fx.store.windows.claim('t', key(1), 600 * T, payload), 'requeued', 'a dead letter is re-queued too');
      const [fromDead] = await lease();
      assert.equal(fromDead?.id, mes!.id);
      await fx.store.deliveries.settle(fromDead, { outcome: 'delivered' });
      assert.equal(await fx.store.windows.claim('t', key(1), 600 * T, payload), 'repeat', 'delivered everywhere: suppressed');
      assert.equal((await fx.store.deliveries.deadLetters(null, 1000)).filter((x) => x.entry.key.startsWith(prefix)).length, 0);
    });

    test("an incident's re-fire (SUPPRESS or UPDATE) re-queues its failing deliveries in the same step", async () => {
      const claim = { tenant: 't', key: key(1), fingerprint: 'MAJOR|0', ttlMs: 600 * T, outbox: payload };
      assert.equal((await fx.store.incidents.decide(claim)).outcome.kind, 'created');
      await fanOutAll(['snow']);
      const [d] = await lease();
      await fx.store.deliveries.settle(d!, { outcome: 'retry', delayMs: 300 * T, error: 'HTTP 503' });
      assert.deepEqual(await lease(), []);
      assert.equal((await fx.store.incidents.decide(claim)).outcome.kind, 'unchanged', 'still a SUPPRESS');
      const [again] = await lease();
      assert.equal(again?.id, d!.id, 'due at once');
      await fx.store.deliveries.settle(again, { outcome: 'dead', error: 'HTTP 500' });
      assert.equal((await fx.store.incidents.decide({ ...claim, fingerprint: 'CRITICAL|0' })).outcome.kind, 'changed');
      await fanOutAll(['snow']);
      const [first, ...others] = await lease();
      assert.deepEqual([first?.entry.action, others.length], ['create', 0], 'the dead create is back, and goes before the new update');
      assert.ok(await fx.store.deliveries.settle(first!, { outcome: 'delivered' }));
      assert.deepEqual(
        (await lease()).map((x) => x.entry.action),
        ['update'],
      );
    });

    test('renew: the holder keeps its lease longer; a lease lost or settled is not renewed', async () => {
      assert.equal(await fx.store.windows.claim('t', key(1), 600 * T, payload), 'claimed');
      await fanOutAll(['hook']);
      const [d] = await lease('w1', 10 * T);
      assert.ok(d);
      await fx.advance(6 * T);
      assert.equal(await fx.store.deliveries.renew(d, 10 * T), true);
      await fx.advance(6 * T);
      assert.deepEqual(await lease('w2'), [], 'past the first lease, inside the renewed one: not due');
      assert.equal(await fx.store.deliveries.renew({ ...d, lease: 'not-the-token' }, 10 * T), false, 'only the holder renews');
      assert.ok(await fx.store.deliveries.settle(d, { outcome: 'delivered' }));
      assert.equal(await fx.store.deliveries.renew(d, 10 * T), false, 'a settled delivery has no lease to renew');
    });

    test("a receiver's Retry-After is a floor: a re-fire or a change re-queues the delivery no sooner than it asked", async () => {
      const claim = { tenant: 't', key: key(1), fingerprint: 'MAJOR|0', ttlMs: 600 * T, outbox: payload };
      assert.equal((await fx.store.incidents.decide(claim)).outcome.kind, 'created');
      await fanOutAll(['snow', 'hook']);
      const [hook, snow] = await lease();
      // snow answered 429 with Retry-After: its own backoff would be short, the floor is long; hook a plain 503.
      assert.ok(await fx.store.deliveries.settle(snow!, { outcome: 'retry', delayMs: 300 * T, floorMs: 600 * T, error: 'HTTP 429' }));
      assert.ok(await fx.store.deliveries.settle(hook!, { outcome: 'retry', delayMs: 300 * T, error: 'HTTP 503' }));
      assert.equal((await fx.store.incidents.decide(claim)).outcome.kind, 'unchanged');
      assert.equal((await fx.store.incidents.decide({ ...claim, fingerprint: 'CRITICAL|0' })).outcome.kind, 'changed');
      await fanOutAll(['snow', 'hook']);
      assert.deepEqual(
        (await lease()).map((d) => `${d.adapter} ${d.entry.action}`),
        ['hook create'],
        'the plain failure is hurried by the re-fire; the one under Retry-After waits, and the update waits behind it',
      );
    });

    test("a repeat re-queues only what is failing now: not what was delivered, dropped or swept since, nor another key's", async () => {
      // A window's repeat says whether it re-queued anything, so a delivery wrongly still counted as failing shows.
      const repeat = (i: number) => fx.store.windows.claim('t', key(i), 600 * T, payload);
      for (const i of [1, 2, 3, 4]) assert.equal(await repeat(i), 'claimed');
      await fanOutAll(['hook']);
      const [d1, d2, d3, d4] = await lease();
      // 1 fails, then goes; 2 dies and is dropped; 3 dies and is swept; 4 keeps failing.
      await fx.store.deliveries.settle(d1!, { outcome: 'retry', delayMs: 5 * T, error: 'HTTP 503' });
      await fx.store.deliveries.settle(d2!, { outcome: 'dead', error: 'HTTP 400' });
      await fx.store.deliveries.settle(d3!, { outcome: 'dead', error: 'HTTP 400' });
      await fx.store.deliveries.settle(d4!, { outcome: 'retry', delayMs: 300 * T, error: 'HTTP 503' });
      assert.equal(await fx.store.deliveries.dropDeadLetter('t', d2!.id), true);
      await fx.advance(6 * T);
      const retried = await lease();
      assert.deepEqual(
        retried.map((d) => d.id),
        [d1!.id],
      );
      assert.ok(await fx.store.deliveries.settle(retried[0]!, { outcome: 'delivered' }));
      await fx.advance(5 * T);
      assert.ok((await fx.store.deliveries.sweepDeadLetters(10 * T)) >= 1);
      assert.deepEqual([await repeat(1), await repeat(2), await repeat(3), await repeat(4)], ['repeat', 'repeat', 'repeat', 'requeued']);
      const requeued = await lease();
      assert.deepEqual(
        requeued.map((d) => d.id),
        [d4!.id],
        'only the delivery still failing is due again',
      );
      assert.ok(await fx.store.deliveries.settle(requeued[0]!, { outcome: 'delivered' }));
      assert.deepEqual(
        [await repeat(1), await repeat(2), await repeat(3), await repeat(4)],
        ['repeat', 'repeat', 'repeat', 'repeat'],
        'nothing is failing now',
      );
      assert.deepEqual(await lease(), []);
    });

    test("one key's deliveries to one adapter go out one at a time, oldest first; a dead one holds the rest until it is retried", async () => {
      const claim = { tenant: 't', key: key(1), fingerprint: 'MAJOR|0', ttlMs: 600 * T, outbox: payload };
      await fx.store.incidents.decide(claim);
      await fx.store.incidents.decide({ ...claim, fingerprint: 'CRITICAL|0' });
      await fx.store.incidents.decide({ ...claim, fingerprint: 'MINOR|0' });
      await fx.store.incidents.decide({ ...claim, key: key(2) });
      await fanOutAll(['snow', 'hook']);
      const label = (ds: Delivery[]) => ds.map((d) => `${d.entry.key === key(1) ? 'k1' : 'k2'}:${d.entry.action}${d.n}.${d.adapter}`).sort();
      // Two workers at once: between them, one delivery per key and adapter.
      const w1 = await lease('w1');
      const w2 = await lease('w2');
      assert.deepEqual(label([...w1, ...w2]), ['k1:create1.hook', 'k1:create1.snow', 'k2:create1.hook', 'k2:create1.snow']);
      for (const d of [...w1, ...w2]) if (d.entry.key === key(2)) assert.ok(await fx.store.deliveries.settle(d, { outcome: 'delivered' }));
      const held = (adapter: string) => [...w1, ...w2].find((d) => d.entry.key === key(1) && d.adapter === adapter)!;
      // A retry keeps its place: the update waits behind it, even once the retry is due.
      assert.ok(await fx.store.deliveries.settle(held('snow'), { outcome: 'retry', delayMs: 0, error: 'HTTP 503' }));
      // Delivered: the next of that key and adapter is due at once.
      assert.ok(await fx.store.deliveries.settle(held('hook'), { outcome: 'delivered' }));
      assert.deepEqual(label(await lease('w3')), ['k1:create1.snow', 'k1:update1.hook']);
      const again = (await fx.store.deliveries.leaseDue('w4', 10 * T, 1000)).filter((d) => d.entry.key.startsWith(prefix));
      assert.deepEqual(again, [], 'nothing else of key 1 while both heads are leased');
      await fx.advance(10 * T);
      const expired = await lease('w5');
      assert.deepEqual(label(expired), ['k1:create1.snow', 'k1:update1.hook'], 'an expired lease hands the same heads out again');
      const snow = expired.find((d) => d.adapter === 'snow')!;
      assert.ok(await fx.store.deliveries.settle(snow, { outcome: 'dead', error: 'HTTP 400' }));
      // A dead letter keeps its place: the updates behind it wait, so the receiver never gets an update
      // (or a close) of a key before the create it refused.
      assert.deepEqual(label(await lease('w6')), [], 'nothing of key 1 goes to snow while its create is dead');
      const [dl] = (await fx.store.deliveries.deadLetters(null, 1000)).filter((d) => d.entry.key.startsWith(prefix));
      assert.deepEqual([dl?.id, dl?.waiting], [snow.id, 2], 'the dead letter says two updates wait behind it');
      // Retried, it goes first, and the updates follow it in order.
      assert.ok(await fx.store.deliveries.retryDeadLetter(null, snow.id));
      const order: string[] = [];
      for (
        let batch = (await lease('w7')).filter((d) => d.adapter === 'snow');
        batch.length > 0;
        batch = (await lease('w7')).filter((d) => d.adapter === 'snow')
      ) {
        order.push(...label(batch));
        for (const d of batch) assert.ok(await fx.store.deliveries.settle(d, { outcome: 'delivered' }));
      }
      assert.deepEqual(order, ['k1:create1.snow', 'k1:update1.snow', 'k1:update2.snow']);
    });

    test('a dropped or swept dead letter lets the next delivery of its key go; a drop takes the tenant and happens once', async () => {
      const claim = { tenant: 't', key: key(1), fingerprint: 'MAJOR|0', ttlMs: 600 * T, outbox: payload };
      await fx.store.incidents.decide(claim);
      await fx.store.incidents.decide({ ...claim, fingerprint: 'CRITICAL|0' });
      await fx.store.incidents.close('t', key(1));
      await fanOutAll(['snow']);
      const actions = (ds: Delivery[]) => ds.map((d) => `${d.entry.action}${d.n}`);
      const [create] = await lease();
      assert.ok(await fx.store.deliveries.settle(create!, { outcome: 'dead', error: 'HTTP 400' }));
      assert.deepEqual(await lease(), [], 'held behind the dead create');
      assert.equal(await fx.store.deliveries.dropDeadLetter('other', create!.id), false, 'another tenant cannot drop it');
      assert.deepEqual(await lease(), [], 'still held');
      assert.equal(await fx.store.deliveries.dropDeadLetter('t', create!.id), true);
      assert.equal(await fx.store.deliveries.dropDeadLetter('t', create!.id), false, 'dropped once');
      assert.equal(await fx.store.deliveries.retryDeadLetter('t', create!.id), false, 'and gone for good');
      const [update] = await lease();
      assert.deepEqual(actions([update!]), ['update1'], 'the update heads the line now');
      // The update dies too; the sweep after its retention releases the close as a drop would.
      assert.ok(await fx.store.deliveries.settle(update!, { outcome: 'dead', error: 'HTTP 400' }));
      assert.deepEqual(await lease(), []);
      await fx.advance(11 * T);
      assert.ok((await fx.store.deliveries.sweepDeadLetters(10 * T)) >= 1);
      const [close] = await lease();
      assert.deepEqual(actions([close!]), ['close1'], 'the sweep let the close go');
      assert.ok(await fx.store.deliveries.settle(close!, { outcome: 'delivered' }));
      assert.deepEqual(await lease(), []);
    });

    test('dead letters are kept for their retention, then swept; a pending delivery never is', async () => {
      await fx.store.windows.claim('t', key(1), 60 * T, payload);
      await fx.store.windows.claim('t', key(2), 60 * T, payload);
      await fanOutAll(['hook']);
      const [dead, pending] = await lease();
      await fx.store.deliveries.settle(dead!, { outcome: 'dead', error: 'HTTP 400' });
      await fx.store.deliveries.settle(pending!, { outcome: 'retry', delayMs: 15 * T, error: 'HTTP 503' });
      const retention = 10 * T;
      await fx.advance(5 * T);
      await fx.store.deliveries.sweepDeadLetters(retention);
      const mine = async () => (await fx.store.deliveries.deadLetters(null, 1000)).filter((d) => d.entry.key.startsWith(prefix)).map((d) => d.id);
      assert.deepEqual(await mine(), [dead!.id], 'kept inside its retention');
      await fx.advance(6 * T);
      assert.ok((await fx.store.deliveries.sweepDeadLetters(retention)) >= 1);
      assert.deepEqual(await mine(), [], 'swept after it');
      assert.equal(await fx.store.deliveries.retryDeadLetter(null, dead!.id), false, 'and gone for good');
      await fx.advance(5 * T);
      const [retried] = await lease();
      assert.equal(retried?.id, pending!.id, 'the retrying delivery was never swept');
      await fx.store.deliveries.settle(retried!, { outcome: 'delivered' });
    });

    test('backlog counts pending and dead and dates the oldest waiting entry', async () => {
      const before = await fx.store.deliveries.backlog();
      await fx.store.windows.claim('t', key(1), 60 * T, payload);
      const waiting = await fx.store.deliveries.backlog();
      assert.ok(waiting.oldestAt !== null, 'an outbox entry waits');
      await fanOutAll(['hook', 'mes']);
      const fanned = await fx.store.deliveries.backlog();
      assert.equal(fanned.pending - before.pending, 2);
      const [a] = await lease();
      await fx.store.deliveries.settle(a!, { outcome: 'dead', error: 'x' });
      const after = await fx.store.deliveries.backlog();
      assert.equal(after.pending - before.pending, 1);
      assert.equal(after.dead - before.dead, 1);
    });

    const claim = (k: string, severity: string) => ({ tenant: 't', key: k, fingerprint: `${severity}|0`, ttlMs: 600 * T, outbox: { ...payload, severity } });

    test('fold and hold: what queues behind a held delivery folds into it, and its release carries the latest state, once', async () => {
      const d = fx.store.deliveries;
      await fx.store.incidents.decide(claim(key(1), 'MAJOR'));
      await fanOutAll(['hook']);
      const [head] = await lease();
      const before = await d.backlog();
      assert.deepEqual(await d.fold(head!, 5 * T), { kind: 'held', folded: 0 });
      const during = await d.backlog();
      assert.equal(during.held - before.held, 1, 'counted as held');
      // A shared server may hold older deliveries of earlier tests (backing off): then the oldest must stay theirs.
      const olderLeftover = before.oldestAt !== null && before.oldestAt < head!.entry.at;
      if (olderLeftover) assert.equal(during.oldestAt, before.oldestAt, 'a held delivery does not change the lag');
      else assert.ok(during.oldestAt === null || during.oldestAt > head!.entry.at, 'a held delivery is not lag');
      assert.equal(await d.settle(head!, { outcome: 'delivered' }), false, 'a hold gives up the lease');
      await fx.store.incidents.decide(claim(key(1), 'CRITICAL'));
      await fx.store.incidents.decide(claim(key(1), 'MINOR'));
      await fanOutAll(['hook']);
      assert.deepEqual(await lease(), [], 'nothing goes out while the head is held: the updates wait behind it');
      await fx.advance(6 * T);
      const [again] = await lease();
      assert.deepEqual([again?.id, again?.entry.action, again?.held], [head!.id, 'create', true], 'the held head comes due, marked held');
      const r = await d.fold(again!, null);
      assert.equal(r.kind, 'ready');
      if (r.kind !== 'ready') return;
      assert.equal(r.folded, 2);
      assert.deepEqual(
        [r.delivery.entry.action, r.delivery.entry.severity, r.delivery.held, r.delivery.n],
        ['create', 'MINOR', undefined, 1],
        'one create, with the latest state',
      );
      assert.equal((await d.backlog()).held, before.held, 'released');
      assert.equal(await d.settle(r.delivery, { outcome: 'delivered' }), true, 'the release keeps the lease');
      assert.deepEqual(await lease(), [], 'the folded updates are gone');
    });

    test('a create and its close both held: nothing goes out; a close behind a delivered create supersedes the held update', async () => {
      const d = fx.store.deliveries;
      await fx.store.incidents.decide(claim(key(1), 'MAJOR'));
      await fanOutAll(['hook']);
      const [created] = await lease();
      await d.fold(created!, 5 * T);
      await fx.store.incidents.close('t', key(1));
      await fanOutAll(['hook']);
      await fx.advance(6 * T);
      const [head] = await lease();
      assert.deepEqual(await d.fold(head!, 5 * T), { kind: 'dropped', folded: 1 });
      await fx.advance(6 * T);
      assert.deepEqual(await lease(), [], 'neither the create nor the close goes out');

      // The create went out; then an update is held, and the incident closes.
      await fx.store.incidents.decide(claim(key(2), 'MAJOR'));
      await fanOutAll(['hook']);
      const [c2] = await lease();
      await d.settle(c2!, { outcome: 'delivered' });
      await fx.store.incidents.decide(claim(key(2), 'CRITICAL'));
      await fanOutAll(['hook']);
      const [u2] = await lease();
      assert.equal(u2?.entry.action, 'update');
      await d.fold(u2!, 5 * T);
      await fx.store.incidents.close('t', key(2));
      await fanOutAll(['hook']);
      await fx.advance(6 * T);
      const [h2] = await lease();
      assert.deepEqual(await d.fold(h2!, 5 * T), { kind: 'superseded', folded: 0 });
      const [close] = await lease();
      assert.deepEqual([close?.entry.key, close?.entry.action], [key(2), 'close'], 'the close is due at once');
    });

    test('a create tried once is never dropped with its close: it goes with the state before the close, then the close', async () => {
      // A try that timed out may have made the ticket though its answer was lost; dropped with the close behind it,
      // the receiver's last word on the key would be that create: a ticket open for a fault that cleared.
      const d = fx.store.deliveries;
      await fx.store.incidents.decide(claim(key(1), 'MAJOR'));
      await fanOutAll(['hook']);
      const [created] = await lease();
      assert.ok(await d.settle(created!, { outcome: 'retry', delayMs: 0, error: 'timed out after 1000 ms' }));
      await fx.store.incidents.decide(claim(key(1), 'CRITICAL'));
      await fx.store.incidents.close('t', key(1));
      await fanOutAll(['hook']);
      const [again] = await lease();
      assert.deepEqual([again?.id, again?.entry.action], [created!.id, 'create']);
      // A Retry-After floor (or a mute) folds it and holds it.
      assert.deepEqual(await d.fold(again!, 5 * T), { kind: 'held', folded: 1 }, 'the update between goes into it; the close stays');
      await fx.advance(6 * T);
      const [head] = await lease();
      const r = await d.fold(head!, null);
      assert.equal(r.kind, 'ready');
      if (r.kind !== 'ready') return;
      assert.deepEqual([r.delivery.entry.action, r.delivery.entry.severity], ['create', 'CRITICAL'], 'the create carries the state before the close');
      assert.ok(await d.settle(r.delivery, { outcome: 'delivered' }));
      const [close] = await lease();
      assert.deepEqual([close?.entry.key, close?.entry.action], [key(1), 'close'], 'and the close follows it');
    });

    test('a held create dropped with its close: the key opened again behind them is due at once', async () => {
      const d = fx.store.deliveries;
      await fx.store.incidents.decide(claim(key(1), 'MAJOR'));
      await fanOutAll(['hook']);
      const [created] = await lease();
      await d.fold(created!, 5 * T);
      await fx.store.incidents.close('t', key(1));
      await fx.store.incidents.decide(claim(key(1), 'CRITICAL'));
      await fanOutAll(['hook']);
      assert.deepEqual(await lease(), [], 'behind the held head, nothing is handed out (a lease pass passes them over)');
      await fx.advance(6 * T);
      const [head] = await lease();
      assert.deepEqual(await d.fold(head!, 5 * T), { kind: 'dropped', folded: 1 });
      const [next] = await lease();
      assert.deepEqual([next?.entry.key, next?.entry.action, next?.entry.severity], [key(1), 'create', 'CRITICAL'], 'the new episode goes now');
    });

    test('a held close with its key opened again behind it: the close and what was between go, the last create or close is due now', async () => {
      const d = fx.store.deliveries;
      const cycle = async (k: string, n: number) => {
        for (let i = 0; i < n; i++) {
          await fx.store.incidents.decide(claim(k, i % 2 ? 'CRITICAL' : 'MAJOR'));
          await fx.store.incidents.close('t', k);
        }
      };
      // Delivered create; then its close is held (flapping), and the key opens, closes and opens again.
      for (const [k, then, last] of [
        [key(1), async () => fx.store.incidents.decide(claim(key(1), 'MINOR')), 'create'],
        [key(2), async () => {}, 'close'],
      ] as const) {
        await fx.store.incidents.decide(claim(k, 'MAJOR'));
        await fanOutAll(['hook']);
        const [c] = await lease();
        await d.settle(c!, { outcome: 'delivered' });
        await fx.store.incidents.close('t', k);
        await fanOutAll(['hook']);
        const [x] = await lease();
        assert.equal(x?.entry.action, 'close');
        assert.deepEqual(await d.fold(x!, 5 * T), { kind: 'held', folded: 0 }, 'a lone close is held as it is');
        await cycle(k, 2);
        await then();
        await fanOutAll(['hook']);
        await fx.advance(6 * T);
        const [h] = await lease();
        assert.deepEqual([h?.id, h?.entry.action], [x!.id, 'close']);
        const r = await d.fold(h!, 5 * T);
        assert.deepEqual(r, { kind: 'superseded', folded: last === 'create' ? 4 : 3 }, k);
        const [next] = await lease();
        assert.deepEqual([next?.entry.key, next?.entry.action], [k, last], 'the last create or close is due at once');
        if (last === 'create') assert.equal(next?.entry.severity, 'MINOR', 'with its own payload');
        await d.settle(next!, { outcome: 'delivered' });
        assert.deepEqual(await lease(), [], 'nothing else of the key is left');
      }
    });

    test('fold under a lost lease changes nothing', async () => {
      const d = fx.store.deliveries;
      await fx.store.incidents.decide(claim(key(1), 'MAJOR'));
      await fanOutAll(['hook']);
      const [head] = await lease();
      assert.deepEqual(await d.fold({ ...head!, lease: 'someone-else' }, 5 * T), { kind: 'lost' });
      assert.equal(await d.settle(head!, { outcome: 'delivered' }), true, 'still leased by its holder');
    });
  });
}
