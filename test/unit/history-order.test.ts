import { test } from 'node:test';
import assert from 'node:assert/strict';
import { inDecidedOrder } from '../../src/history/order.js';
import type { StoredHistoryEvent } from '../../src/store/contract/index.js';

let at = 1_000;
const decision = (decision: string, reason: string): StoredHistoryEvent => ({ at: at++, type: 'decision', decision, reason });
const ev = (type: string): StoredHistoryEvent => ({ at: at++, type });
const names = (events: StoredHistoryEvent[]) => events.map((e) => (e.type === 'decision' ? `${e.decision}/${e.reason}` : e.type));

test('a CREATE written after copies that lost the race to it is read before them, its route with it', () => {
  const written = [
    decision('SUPPRESS', 'lost_race'),
    decision('SUPPRESS', 'lost_race'),
    decision('CREATE', 'new'),
    ev('routed'),
    decision('SUPPRESS', 'unchanged'),
    ev('delivery'),
  ];
  assert.deepEqual(names(inDecidedOrder(written)), ['CREATE/new', 'routed', 'SUPPRESS/lost_race', 'SUPPRESS/lost_race', 'SUPPRESS/unchanged', 'delivery']);
  // The stored list is not changed: the order is the reader's.
  assert.equal(names(written)[0], 'SUPPRESS/lost_race');
});

test('nothing else moves: a plain repeat, an UPDATE, a later life, an expiry boundary', () => {
  const cases: StoredHistoryEvent[][] = [
    [decision('CREATE', 'new'), decision('SUPPRESS', 'lost_race'), decision('UPDATE', 'severity'), decision('SUPPRESS', 'unchanged')],
    // A repeat that was not a race stays before a CREATE (it cannot be its copy).
    [decision('SUPPRESS', 'unchanged'), decision('CREATE', 'new')],
    // The copies before an expiry belong to the life that expired.
    [decision('CREATE', 'new'), decision('SUPPRESS', 'lost_race'), ev('expired'), decision('CREATE', 'expired')],
    [decision('CREATE', 'new'), ev('closed'), decision('CREATE', 'new'), decision('SUPPRESS', 'lost_race')],
    [],
  ];
  for (const events of cases) assert.deepEqual(names(inDecidedOrder(events)), names(events));
});

test('each life of a key is put in order on its own', () => {
  const written = [
    decision('SUPPRESS', 'lost_race'),
    decision('CREATE', 'new'),
    ev('closed'),
    decision('SUPPRESS', 'lost_race'),
    decision('CREATE', 'new'),
    ev('routed'),
  ];
  assert.deepEqual(names(inDecidedOrder(written)), ['CREATE/new', 'SUPPRESS/lost_race', 'closed', 'CREATE/new', 'routed', 'SUPPRESS/lost_race']);
});
