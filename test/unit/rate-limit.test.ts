import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RateLimiter } from '../../src/access/rate-limit.js';
import { manualClock } from '../../src/core/clock.js';

test('a bucket gives its burst, then asks for the seconds until a token is back, and refills', () => {
  const clock = manualClock(0);
  const l = new RateLimiter(clock);
  for (let i = 0; i < 5; i++) assert.equal(l.take('t', 1, 5), 0);
  assert.equal(l.take('t', 1, 5), 1);
  assert.equal(l.take('t', 1, 5, 3), 3, 'all or none: three tokens are three seconds away');
  clock.advance(3000);
  assert.equal(l.take('t', 1, 5, 3), 0);
});

test('buckets keyed by client address cannot grow without bound: refilled ones go first, then the oldest', () => {
  const clock = manualClock(0);
  const l = new RateLimiter(clock, 100);
  // A spent bucket that refills slowly (a throttled address): its state must survive dropping the refilled ones.
  for (let i = 0; i < 3; i++) l.take('slow', 0.001, 3);
  assert.ok(l.take('slow', 0.001, 3) > 0);
  for (let i = 0; i < 99; i++) l.take(`10.0.0.${i}`, 1, 20);
  clock.advance(60_000); // they have refilled: forgetting them changes nothing
  for (let i = 0; i < 90; i++) l.take(`2001:db8::${i.toString(16)}`, 1, 20);
  assert.ok(l.size <= 100, `at most the cap (${l.size})`);
  assert.ok(l.take('slow', 0.001, 3) > 0, 'the spent bucket was kept: only refilled ones were dropped');
  // A flood of more addresses than the cap inside the refill window: the oldest go (they get their burst back; memory stays bounded).
  for (let i = 0; i < 5000; i++) l.take(`2001:db8:1::${i.toString(16)}`, 1, 20);
  assert.ok(l.size <= 100, `still at most the cap (${l.size})`);
});
