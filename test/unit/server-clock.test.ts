import { test } from 'node:test';
import assert from 'node:assert/strict';
import { manualClock, ServerClock } from '../../src/core/clock.js';

test("a ServerClock keeps the server's time: the host's plus the measured offset, half the round trip taken off", async () => {
  const host = manualClock(1_000_000);
  const clock = new ServerClock(host);
  // The host runs 2 h ahead of the server; the round trip takes 10 ms, the server answers halfway.
  await clock.measure(async () => {
    host.advance(5);
    const server = host.now() - 7_200_000;
    host.advance(5);
    return server;
  });
  assert.equal(clock.offsetMs, -7_200_000);
  assert.equal(clock.now(), host.now() - 7_200_000);
  host.advance(1000);
  assert.equal(clock.now(), host.now() - 7_200_000, 'between measurements it moves with the host');
});

test('a small correction backwards holds time still instead of stepping back; a large one is taken', async () => {
  const host = manualClock(1_000_000);
  const clock = new ServerClock(host);
  await clock.measure(async () => host.now());
  const before = clock.now();
  await clock.measure(async () => host.now() - 300);
  assert.equal(clock.now(), before, 'never backwards by a small correction');
  host.advance(400);
  assert.equal(clock.now(), before + 100, 'it catches up');
  await clock.measure(async () => host.now() - 60_000);
  assert.equal(clock.now(), host.now() - 60_000, 'a large correction is taken at once');
});

test('follow measures at once and keeps the last offset when a measurement fails', async () => {
  const host = manualClock(1_000_000);
  const clock = new ServerClock(host);
  const errors: unknown[] = [];
  let fail = false;
  await clock.follow(
    async () => {
      if (fail) throw new Error('store down');
      return host.now() + 500;
    },
    5,
    (e) => errors.push(e),
  );
  assert.equal(clock.offsetMs, 500);
  fail = true;
  await new Promise((r) => setTimeout(r, 30));
  clock.stop();
  assert.ok(errors.length > 0, 'the failures were reported');
  assert.equal(clock.offsetMs, 500, 'the last offset is kept');
});

test("a ServerClock's now works handed on by itself, as an adapter's HTTP call takes it to read a Retry-After", async () => {
  const host = manualClock(1_000_000);
  const clock = new ServerClock(host);
  await clock.measure(async () => host.now() + 3000);
  const { now } = clock;
  assert.equal(now(), host.now() + 3000);
});

/** A measurement whose request waits `waitMs` on the way (an outage) and whose server answers at once. */
const across =
  (host: ReturnType<typeof manualClock>, waitMs: number, serverAhead = 0) =>
  async () => {
    host.advance(waitMs);
    const server = host.now() + serverAhead;
    host.advance(1);
    return server;
  };

test('a measurement that took an outage to answer is set aside: the offset it would give is off by half of it', async () => {
  const host = manualClock(1_000_000);
  const clock = new ServerClock(host);
  assert.equal(await clock.measure(across(host, 1)), true);
  assert.equal(clock.offsetMs, 0);
  // Sent into a black hole, answered 2 s later: taken, it would put this replica 1 s ahead of its peers.
  assert.equal(await clock.measure(across(host, 2000)), false, 'set aside');
  assert.equal(clock.offsetMs, 0, 'the last offset is kept');
  assert.equal(clock.now(), host.now());
  // A quick one is taken again, and a real change of the server's clock with it.
  assert.equal(await clock.measure(across(host, 1, 40)), true);
  assert.equal(clock.offsetMs, 40);
});

test('a path that slowed for good is taken as it is after a run of slow measurements', async () => {
  const host = manualClock(1_000_000);
  const clock = new ServerClock(host);
  await clock.measure(across(host, 1));
  for (let i = 0; i < ServerClock.MAX_SET_ASIDE; i++) assert.equal(await clock.measure(across(host, 400, 700)), false);
  assert.equal(clock.offsetMs, 0);
  assert.equal(await clock.measure(across(host, 400, 700)), true, 'the next is kept');
  assert.equal(clock.offsetMs, 700 + 201 - 1);
  assert.equal(await clock.measure(across(host, 420, 700)), true, 'and the slower path is now the measure of slow');
});
