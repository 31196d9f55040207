// needs:
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { LoopStalls, storeDeadline } from '../../src/store/failopen/loop-stalls.js';
import { StoreTimeoutError } from '../../src/store/errors.js';

const never = () => new Promise<never>(() => {});
const busy = (ms: number) => {
  const end = performance.now() + ms;
  while (performance.now() < end);
};

test('a store that never answers is given up on once its time is used, and a reply in time is taken', async () => {
  const stalls = new LoopStalls();
  try {
    await assert.rejects(storeDeadline(never(), 30, stalls, 'probe'), (err: unknown) => {
      assert.ok(err instanceof StoreTimeoutError);
      assert.match((err as Error).message, /probe did not answer within 30 ms/);
      return true;
    });
    assert.equal(await storeDeadline(new Promise((r) => setTimeout(() => r('pong'), 5)), 200, stalls), 'pong');
  } finally {
    stalls.stop();
  }
});

test('time this process could not run is not counted against the store', async () => {
  const stalls = new LoopStalls();
  try {
    await new Promise((r) => setTimeout(r, 30));
    const before = stalls.now();
    busy(150);
    const stalled = stalls.now() - before;
    assert.ok(stalled >= 100, `a 150 ms busy loop reads as a stall (read ${stalled} ms)`);
  } finally {
    stalls.stop();
  }
});
