import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decideFromOutcome } from '../../src/core/decision.js';
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
  const changed = (previousFingerprint: string, fingerprint: string) => decideFromOutcome({ kind: 'changed', previousFingerprint, fingerprint }, 1000);
  assert.deepEqual(changed('MAJOR|0', 'CRITICAL|0'), { decision: 'UPDATE', reason: 'severity' });
  assert.deepEqual(changed('MAJOR|0', 'MAJOR|1'), { decision: 'UPDATE', reason: 'cleared' });
  assert.deepEqual(changed('MAJOR|0', 'MINOR|1'), { decision: 'UPDATE', reason: 'cleared' });
  assert.deepEqual(changed('MAJOR|1', 'MAJOR|0'), { decision: 'UPDATE', reason: 'reopened' });
});
