// needs:
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { alertmanagerSchema, parseAlertmanager } from '../../src/inputs/alertmanager/schema.js';
import { ValidationError } from '../../src/core/validation.js';

const alert = (i: number, over: Record<string, unknown> = {}) => ({
  status: 'firing',
  labels: { alertname: `a${i}`, severity: 'critical' },
  annotations: { summary: 'down' },
  startsAt: '2026-01-01T00:00:00Z',
  fingerprint: `f${i}`,
  ...over,
});
const post = (alerts: unknown) => ({ version: '4', status: 'firing', receiver: 'r', alerts });
const refusal = (body: unknown): ValidationError => {
  try {
    parseAlertmanager(body);
  } catch (err) {
    assert.ok(err instanceof ValidationError);
    return err;
  }
  return assert.fail('the body was taken');
};

test('a valid post parses alert by alert to exactly what the whole schema gives', () => {
  const body = post(Array.from({ length: 50 }, (_, i) => alert(i, i % 2 ? { endsAt: '2026-01-01T01:00:00Z', extra: 1 } : {})));
  assert.deepEqual(parseAlertmanager(body), alertmanagerSchema.parse(body));
});

test('every issue of a few bad alerts is listed, each at its alert', () => {
  const e = refusal(post([alert(0), alert(1, { startsAt: 'soon' }), alert(2, { status: 'maybe', fingerprint: '' })]));
  assert.deepEqual(
    e.issues.map((i) => i.path),
    ['alerts.1.startsAt', 'alerts.2.status', 'alerts.2.fingerprint'],
  );
  assert.match(e.message, /^invalid Alertmanager payload: alerts\.1\.startsAt: must be an RFC 3339 date-time$/);
});

// Planted fault it catches: the check going on past the issues a refusal lists.
test('a thousand bad alerts: checking stops at 100 issues, and the last one says where', () => {
  const e = refusal(post(Array.from({ length: 1000 }, (_, i) => alert(i, { startsAt: 'bad', endsAt: 'bad' }))));
  assert.equal(e.issues.length, 100);
  assert.deepEqual(e.issues[0], { path: 'alerts.0.startsAt', message: 'must be an RFC 3339 date-time' });
  // Two issues an alert: 99 listed reach into alerts.49, and everything after it is unchecked.
  assert.deepEqual(e.issues[99], { path: 'alerts', message: 'alerts after alerts.49 were not checked: a refusal lists at most 100 issues' });
});

test('bad alerts exactly at the end are all listed, with no line about unchecked ones', () => {
  const e = refusal(post(Array.from({ length: 99 }, (_, i) => alert(i, { startsAt: 'bad' }))));
  assert.equal(e.issues.length, 99);
  assert.ok(e.issues.every((i) => i.path.endsWith('.startsAt')));
});

test('the envelope is checked first: alerts that are not a list, or a wrong version, are refused before any alert', () => {
  assert.deepEqual(refusal(post('many')).issues, [{ path: 'alerts', message: 'must be an array, not a string' }]);
  const e = refusal({ ...post([alert(0, { startsAt: 'bad' })]), version: '3' });
  assert.deepEqual(
    e.issues.map((i) => i.path),
    ['version'],
  );
});
