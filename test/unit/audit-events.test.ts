import { test } from 'node:test';
import assert from 'node:assert/strict';
import { eventsOfAudit, type AuditRecord } from '../../src/store/postgres/audit-events.js';

const row = (at: number, decision: string, reason: string, kind = 'incidents'): AuditRecord => ({
  at: String(at),
  kind,
  decision,
  reason,
  replica: 'host-1:8080',
  request_id: `req-${at}`,
});

test('audit rows read as history events: runs folded by reason, a close that found nothing left out', () => {
  const events = eventsOfAudit([
    row(1000, 'CREATE', 'new'),
    row(2000, 'SUPPRESS', 'lost_race'),
    row(3000, 'SUPPRESS', 'unchanged'),
    row(3500, 'SUPPRESS', 'unchanged'),
    row(6500, 'SUPPRESS', 'unchanged'),
    row(7000, 'UPDATE', 'acknowledged'),
    row(8000, 'CLOSE', 'closed'),
    row(9000, 'NONE', 'not_live'),
  ]);
  assert.deepEqual(
    events.map((e) => [e.at, e.type, e.decision ?? null, e.reason ?? null, e.count ?? null]),
    [
      [1000, 'decision', 'CREATE', 'new', null],
      [2000, 'decision', 'SUPPRESS', 'lost_race', 1],
      [3000, 'decision', 'SUPPRESS', 'unchanged', 3],
      [7000, 'decision', 'UPDATE', 'acknowledged', null],
      [8000, 'closed', null, null, null],
    ],
  );
  assert.deepEqual([events[2]!.first_at, events[2]!.last_at, events[2]!.max_gap_ms], [3000, 6500, 3000]);
  assert.ok(events.every((e) => e.source === 'audit' && e.replica === 'host-1:8080' && e.request_id === `req-${e.at}`));
});

test("a device's duplicates fold; an applied event between two runs splits them", () => {
  const events = eventsOfAudit([
    row(1, 'applied', '', 'events'),
    row(2, 'duplicate', 'seen', 'events'),
    row(3, 'duplicate', 'seen', 'events'),
    row(4, 'applied', '', 'events'),
    row(5, 'duplicate', 'seen', 'events'),
  ]);
  assert.deepEqual(
    events.map((e) => `${e.decision}${e.count ? `×${e.count}` : ''}`),
    ['applied', 'duplicate×2', 'applied', 'duplicate×1'],
  );
});

test('no rows, no events', () => {
  assert.deepEqual(eventsOfAudit([]), []);
});
