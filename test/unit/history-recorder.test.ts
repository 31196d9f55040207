import { test } from 'node:test';
import assert from 'node:assert/strict';
import { manualClock } from '../../src/core/clock.js';
import { Deduplicator } from '../../src/engine/deduplicator.js';
import { HistoryRecorder } from '../../src/history/recorder.js';
import { MemoryStore } from '../../src/store/memory/memory-store.js';

const LIMITS = { maxEvents: 50, keepMs: 3_600_000 };

/** The recorder on the memory store: order, folding before the store, batches, bounds, and what it does when the store refuses. */
test('a SUPPRESS run folds in the buffer; other keys and events keep their order; a full batch writes without the timer', async () => {
  const clock = manualClock(1_000);
  const store = new MemoryStore(clock);
  const h = new HistoryRecorder({ store: store.history, limits: () => LIMITS, clock, batch: 4, flushMs: 60_000 });
  h.record('t', 'k', { type: 'decision', decision: 'CREATE' });
  for (const gap of [10, 30, 5]) {
    clock.advance(gap);
    h.record('t', 'k', { type: 'decision', decision: 'SUPPRESS' }, 'S/f');
  }
  h.record('t', 'other', { type: 'closed' });
  clock.advance(1);
  h.record('t', 'k', { type: 'decision', decision: 'UPDATE' });
  // Four appends wait (the run is one): the batch went without a timer turn.
  await new Promise((r) => setImmediate(r));
  const k = await store.history.read('t', 'k');
  assert.deepEqual(
    k.map((e) => [e.decision, e.count ?? null, e.max_gap_ms ?? null]),
    [
      ['CREATE', null, null],
      ['SUPPRESS', 3, 30],
      ['UPDATE', null, null],
    ],
  );
  assert.deepEqual([k[1]!.first_at, k[1]!.last_at], [1_010, 1_045]);
  assert.equal((await store.history.read('t', 'other')).length, 1);
});

test('history off (no limits) records nothing; a store that refuses loses the batch and says how many', async () => {
  const clock = manualClock(1_000);
  const store = new MemoryStore(clock);
  let on = false;
  const lost: number[] = [];
  const h = new HistoryRecorder({ store: store.history, limits: () => (on ? LIMITS : null), clock, lost: (n) => lost.push(n) });
  h.record('t', 'k', { type: 'closed' });
  await h.flush();
  assert.deepEqual(await store.history.read('t', 'k'), []);
  on = true;
  h.record('t', 'k', { type: 'closed' });
  h.record('t', 'j', { type: 'closed' });
  await store.close();
  await h.flush();
  assert.deepEqual(lost, [2], 'the refused batch is counted, not retried');
});

test('at most maxWaiting events wait while writes lag; the rest are counted lost', async () => {
  const clock = manualClock(1_000);
  let release: () => void = () => {};
  const gate = new Promise<void>((r) => (release = r));
  const store = new MemoryStore(clock);
  // The store's own append, held back until the gate opens: a store that is slow to answer.
  const slow = { append: async (...a: Parameters<typeof store.history.append>) => gate.then(() => store.history.append(...a)) };
  let lost = 0;
  const reasons = new Set<string>();
  const h = new HistoryRecorder({
    store: slow,
    limits: () => LIMITS,
    clock,
    batch: 10,
    maxWaiting: 25,
    lost: (n, reason) => {
      lost += n;
      reasons.add(reason);
    },
  });
  for (let i = 0; i < 40; i++) h.record('t', `k${i}`, { type: 'closed' });
  assert.equal(lost, 15);
  assert.deepEqual([...reasons], ['queue_full']);
  release();
  await h.flush();
  let kept = 0;
  for (let i = 0; i < 40; i++) kept += (await store.history.read('t', `k${i}`)).length;
  assert.equal(kept, 25);
});

test('a healthy store at full speed loses nothing: what is recorded during a write goes in one write after it', async () => {
  const clock = manualClock(1_000);
  const store = new MemoryStore(clock);
  let lost = 0;
  const recorder = new HistoryRecorder({ store: store.history, limits: () => LIMITS, clock, lost: (n) => (lost += n) });
  const dedup = new Deduplicator({ store, history: { recorder, replica: 'r' } });
  // A library deciding as fast as it can (no timer turn in between): 60,000 new keys, 256 in flight, three times the
  // events that may wait. Each batch's write must keep up; a write queued behind the decisions' own steps would not.
  const keys = Array.from({ length: 60_000 }, (_, i) => `dedup:${i}`);
  let next = 0;
  const worker = async () => {
    while (next < keys.length) await dedup.decide({ tenant: 't', key: keys[next++]!, fingerprint: 'MAJOR|0', ttlMs: 60_000 });
  };
  await Promise.all(Array.from({ length: 256 }, worker));
  await recorder.flush();
  assert.equal(lost, 0);
  for (const key of [keys[0]!, keys[30_000]!, keys.at(-1)!])
    assert.deepEqual(
      (await store.history.read('t', key)).map((e) => e.decision),
      ['CREATE'],
    );
});

test('a batch the store refuses is dropped whole, counted as store_refused with the error, and the next batch is written', async () => {
  const clock = manualClock(1_000);
  const store = new MemoryStore(clock);
  let refuse = true;
  const flaky = {
    append: async (...a: Parameters<typeof store.history.append>) => {
      if (refuse) throw new Error('store away');
      return store.history.append(...a);
    },
  };
  const dropped: Array<[number, string, string]> = [];
  const h = new HistoryRecorder({ store: flaky, limits: () => LIMITS, clock, lost: (n, reason, err) => dropped.push([n, reason, (err as Error).message]) });
  h.record('t', 'k1', { type: 'closed' });
  h.record('t', 'k2', { type: 'closed' });
  await h.flush();
  assert.deepEqual(dropped, [[2, 'store_refused', 'store away']]);
  refuse = false;
  h.record('t', 'k3', { type: 'closed' });
  await h.flush();
  assert.equal(dropped.length, 1);
  assert.equal((await store.history.read('t', 'k3')).length, 1);
  assert.equal((await store.history.read('t', 'k1')).length, 0);
});
