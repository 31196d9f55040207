import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decideFromOutcome } from '../../src/core/decision.js';
import { RaceWatch } from '../../src/engine/race-watch.js';
import { incidentFingerprint, parseIncidentFingerprint } from '../../src/core/fingerprint.js';

test('fingerprint is severity|cleared and parses back', () => {
  assert.equal(incidentFingerprint({ severity: 'MAJOR', cleared: false }), 'MAJOR|0');
  assert.equal(incidentFingerprint({ severity: 'INFO', cleared: true }), 'INFO|1');
  assert.deepEqual(parseIncidentFingerprint('CRITICAL|1'), { severity: 'CRITICAL', cleared: true });
  assert.throws(() => parseIncidentFingerprint('LOUD|0'), /not an incident fingerprint/);
  assert.throws(() => parseIncidentFingerprint('MAJOR|2'), /not an incident fingerprint/);
});

test('each store outcome maps to one decision and reason', () => {
  assert.deepEqual(decideFromOutcome({ kind: 'created' }, 1000), { decision: 'CREATE', reason: 'new' });
  assert.deepEqual(decideFromOutcome({ kind: 'unchanged', createdAt: 0, now: 1000 }, 1000), {
    decision: 'SUPPRESS',
    reason: 'lost_race',
  });
  assert.deepEqual(decideFromOutcome({ kind: 'unchanged', createdAt: 0, now: 1001 }, 1000), {
    decision: 'SUPPRESS',
    reason: 'unchanged',
  });
  // A copy that raced the CREATE is lost_race; a repeat that did not is unchanged, however soon.
  assert.equal(decideFromOutcome({ kind: 'unchanged', createdAt: 1000, now: 1020 }, 1000, () => true).reason, 'lost_race');
  assert.equal(decideFromOutcome({ kind: 'unchanged', createdAt: 1000, now: 1001 }, 1000, () => false).reason, 'unchanged');
  // The window still caps it.
  assert.equal(decideFromOutcome({ kind: 'unchanged', createdAt: 0, now: 1500 }, 1000, () => true).reason, 'unchanged');
});

test("a race is told by copies overlapping here, or by a claim younger than the copy's own flight", async () => {
  const w = new RaceWatch(true);
  // Two copies of one key on their way at once: the one that met the CREATE raced it.
  const a = w.depart('t', 'k');
  const b = w.depart('t', 'k');
  assert.equal(b()(0), true);
  assert.equal(a()(0), true);
  // Sent after the other was answered, meeting a claim older than its own flight: a plain repeat.
  const c = w.depart('t', 'k');
  assert.equal(c()(5_000), false);
  // Through another replica: the claim it met is younger than half this copy's flight (20 ms here).
  const d = w.depart('t', 'k');
  await new Promise((r) => setTimeout(r, 20));
  assert.equal(d()(2), true);
  // On a store of this process alone only copies overlapping here count.
  const alone = new RaceWatch(false);
  const g = alone.depart('t', 'k');
  await new Promise((r) => setTimeout(r, 20));
  assert.equal(g()(2), false);
  // Another key never counts.
  const e = w.depart('t', 'k1');
  const f = w.depart('t', 'k2');
  assert.equal(e()(5_000), false);
  assert.equal(f()(5_000), false);
  const changed = (previousFingerprint: string, fingerprint: string) => decideFromOutcome({ kind: 'changed', previousFingerprint, fingerprint }, 1000);
  assert.deepEqual(changed('MAJOR|0', 'CRITICAL|0'), { decision: 'UPDATE', reason: 'severity' });
  assert.deepEqual(changed('MAJOR|0', 'MAJOR|1'), { decision: 'UPDATE', reason: 'cleared' });
  assert.deepEqual(changed('MAJOR|0', 'MINOR|1'), { decision: 'UPDATE', reason: 'cleared' });
  assert.deepEqual(changed('MAJOR|1', 'MAJOR|0'), { decision: 'UPDATE', reason: 'reopened' });
});
