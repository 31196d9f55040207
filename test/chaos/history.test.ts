import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Recorded } from '../fakes/http-fake.js';
import { repeatsAgainstKills } from './harness.js';
import { checkHistory, describe as describeViolation, History, type Op } from './history.js';

// The checker is what the chaos tests trust: it must reject each illegal
// shape and accept the legal ones, including indeterminate operations.
function history(...ops: Array<Partial<Op> & Pick<Op, 'start' | 'end'>>) {
  const h = new History();
  for (const o of ops) h.record({ kind: 'ingest', key: 'k', fp: 'MAJOR|0', replica: 0, status: 200, ...o });
  return h.ops;
}

test('a legal history: one CREATE, re-fires SUPPRESS, a change UPDATE, a close and a new CREATE', () => {
  const ops = history(
    { start: 0, end: 1, decision: 'CREATE' },
    { start: 2, end: 3, decision: 'SUPPRESS' },
    { start: 4, end: 5, decision: 'UPDATE', fp: 'CRITICAL|0' },
    { start: 6, end: 7, kind: 'close', status: 204 },
    { start: 8, end: 9, decision: 'CREATE' },
  );
  assert.deepEqual(checkHistory(ops), []);
});

test('two CREATEs in one episode are a violation, and the report names them', () => {
  const v = checkHistory(history({ start: 0, end: 2, decision: 'CREATE' }, { start: 1, end: 3, decision: 'CREATE' }));
  assert.equal(v.length, 1);
  assert.match(v[0]!.rule, /2 CREATEs \(ops 0, 1\)/);
  assert.match(describeViolation(v[0]!), /#1 ingest replica 0 1\.0–3\.0 ms status 200 CREATE/);
});

test('no CREATE at all is a lost incident, unless an operation is indeterminate', () => {
  const lost = checkHistory(history({ start: 0, end: 1, decision: 'SUPPRESS' }, { start: 2, end: 3, decision: 'SUPPRESS' }));
  assert.equal(lost.length, 2, 'never CREATE, and the first SUPPRESS had nothing before it');
  assert.ok(lost.some((v) => /never CREATE/.test(v.rule)));
  // The first request's replica died after deciding: its CREATE is lost with the answer, which is allowed.
  assert.deepEqual(checkHistory(history({ start: 0, end: 5, status: 0 }, { start: 2, end: 3, decision: 'SUPPRESS' })), []);
});

test('an UPDATE without a different fingerprint before it, or a SUPPRESS of a fingerprint never sent, is a violation', () => {
  const v = checkHistory(history({ start: 0, end: 1, decision: 'CREATE' }, { start: 2, end: 3, decision: 'UPDATE' }));
  assert.equal(v.length, 1);
  assert.match(v[0]!.rule, /UPDATE to MAJOR\|0/);
  const s = checkHistory(history({ start: 0, end: 1, decision: 'CREATE' }, { start: 2, end: 3, decision: 'SUPPRESS', fp: 'CRITICAL|0' }));
  assert.equal(s.length, 1);
  assert.match(s[0]!.rule, /SUPPRESS of CRITICAL\|0/);
});

test('the checker follows the key’s state: a SUPPRESS of MAJOR after an UPDATE to CRITICAL, and a second UPDATE to CRITICAL, are violations', () => {
  const back = checkHistory(
    history({ start: 0, end: 1, decision: 'CREATE' }, { start: 2, end: 3, decision: 'UPDATE', fp: 'CRITICAL|0' }, { start: 4, end: 5, decision: 'SUPPRESS' }),
  );
  assert.equal(back.length, 1, JSON.stringify(back.map((v) => v.rule)));
  assert.match(back[0]!.rule, /op 2 SUPPRESS of MAJOR\|0, but the key could only hold CRITICAL\|0 then/);
  const twice = checkHistory(
    history(
      { start: 0, end: 1, decision: 'CREATE' },
      { start: 2, end: 3, decision: 'UPDATE', fp: 'CRITICAL|0' },
      { start: 4, end: 5, decision: 'UPDATE', fp: 'CRITICAL|0' },
    ),
  );
  assert.equal(twice.length, 1, JSON.stringify(twice.map((v) => v.rule)));
  assert.match(twice[0]!.rule, /op 2 UPDATE to CRITICAL\|0, but the key could only hold CRITICAL\|0 then/);
  // The same shapes are legal when the operations overlap (either order could have happened)…
  assert.deepEqual(
    checkHistory(
      history({ start: 0, end: 1, decision: 'CREATE' }, { start: 2, end: 6, decision: 'UPDATE', fp: 'CRITICAL|0' }, { start: 4, end: 5, decision: 'SUPPRESS' }),
    ),
    [],
  );
  // …or when what stands between did not surely take effect (no answer: it may never have happened).
  assert.deepEqual(
    checkHistory(
      history(
        { start: 0, end: 1, decision: 'CREATE' },
        { start: 2, end: 3, fp: 'CRITICAL|0', status: 0 },
        { start: 4, end: 5, decision: 'SUPPRESS' },
        { start: 6, end: 7, decision: 'UPDATE', fp: 'CRITICAL|0' },
      ),
    ),
    [],
  );
});

test('after a close the next decision must be a CREATE', () => {
  const v = checkHistory(
    history({ start: 0, end: 1, decision: 'CREATE' }, { start: 2, end: 3, kind: 'close', status: 204 }, { start: 4, end: 5, decision: 'SUPPRESS' }),
  );
  assert.ok(
    v.some((x) => /episode 1/.test(x.rule)),
    JSON.stringify(v.map((x) => x.rule)),
  );
});

test('a provisional CREATE beside the real one is allowed (it is merged on reconciliation)', () => {
  assert.deepEqual(checkHistory(history({ start: 0, end: 1, decision: 'CREATE', provisional: true }, { start: 2, end: 3, decision: 'CREATE' })), []);
});

test('an operation that overlaps a close may belong to either episode: rules lean on it but do not count it', () => {
  // The CREATE at 2–5 overlaps the close at 3: the SUPPRESS after the close may be re-firing what it created.
  const ops = history(
    { start: 0, end: 1, decision: 'CREATE' },
    { start: 2, end: 5, decision: 'CREATE' },
    { start: 3, end: 3, kind: 'close', status: 204 },
    { start: 6, end: 7, decision: 'SUPPRESS' },
  );
  assert.deepEqual(checkHistory(ops), []);
  // Without that overlap the same SUPPRESS is illegal.
  const clear = history({ start: 0, end: 1, decision: 'CREATE' }, { start: 3, end: 3, kind: 'close', status: 204 }, { start: 6, end: 7, decision: 'SUPPRESS' });
  assert.equal(checkHistory(clear).length, 2);
});

test('the repeat check explains a repeat only by a kill just before, or while, its first arrival was made', () => {
  const call = (key: string, at: number) => ({ headers: { 'idempotency-key': key }, at }) as unknown as Recorded;
  const kills = [{ at: 10_000, exited: 10_050 }];
  const ok = repeatsAgainstKills([call('a', 9_900), call('a', 13_000), call('b', 5_000)], kills, 500);
  assert.deepEqual([ok.calls, ok.repeats, ok.unexplained.length, ok.most], [2, 1, 0, 2], 'applied 100 ms before the kill, repeated after it');
  const dying = repeatsAgainstKills([call('a', 10_020), call('a', 13_000)], kills, 500);
  assert.equal(dying.unexplained.length, 0, 'made by the replica after its SIGKILL was sent, before it had exited');
  const early = repeatsAgainstKills([call('a', 2_000), call('a', 13_000)], kills, 500);
  assert.equal(early.unexplained.length, 1, 'applied long before the kill: its settle had committed, a repeat is a defect');
  const readLate = repeatsAgainstKills([call('a', 10_058), call('a', 13_000)], kills, 500);
  assert.equal(readLate.unexplained.length, 0, 'written by the replica before it died, read by a busy receiver just after the exit');
  const late = repeatsAgainstKills([call('a', 10_400), call('a', 13_000)], kills, 500);
  assert.equal(late.unexplained.length, 1, 'first made after the replica had exited: another replica’s call, its repeat unexplained');
  const noKill = repeatsAgainstKills([call('a', 9_900), call('a', 9_950)], kills, 500);
  assert.equal(noKill.unexplained.length, 1, 'repeated before the kill: nothing explains it');
  assert.equal(repeatsAgainstKills([call('a', 1), call('a', 2)], [], 500).unexplained.length, 1, 'no kills, no repeats allowed');
});
