import { test } from 'node:test';
import assert from 'node:assert/strict';
import { testSeed } from '../helpers/seed.js';

// One TEST_SEED replays every file's random draw; files draw apart from one another.
test('a run seed gives each file the same seed every time, and different files different seeds', () => {
  const saved = process.env.TEST_SEED;
  try {
    process.env.TEST_SEED = '12345';
    const a = testSeed('chaos/model');
    assert.equal(testSeed('chaos/model'), a, 'the same run seed replays the same draw');
    assert.notEqual(testSeed('chaos/store-kill'), a, 'another file draws otherwise');
    assert.ok(Number.isInteger(a) && a >= 0 && a < 2 ** 31);
    process.env.TEST_SEED = '12346';
    assert.notEqual(testSeed('chaos/model'), a, 'another run seed, another draw');
    process.env.TEST_SEED = 'abc';
    assert.throws(() => testSeed('chaos/model'), /TEST_SEED must be a whole number/);
  } finally {
    if (saved === undefined) delete process.env.TEST_SEED;
    else process.env.TEST_SEED = saved;
  }
});
