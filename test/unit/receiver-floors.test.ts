import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ReceiverFloors } from '../../src/delivery/gate/floor-stage.js';
import type { Delivery } from '../../src/store/contract/index.js';

const delivery = (key: string, adapter = 'hook', tenant = 'default'): Delivery =>
  ({
    id: `1.${adapter}`,
    adapter,
    n: 1,
    retries: 0,
    attempts: [],
    status: 'pending',
    lease: 'x',
    entry: { tenant, kind: 'incident', action: 'create', key, severity: 'MAJOR', summary: '', data: {}, at: 0 },
  }) as Delivery;

test("a receiver's Retry-After holds every row of its line, whichever store the row is in, and only that line", () => {
  let now = 1000;
  const floors = new ReceiverFloors(() => now);
  floors.note(delivery('k1'), 3000);
  // Another row of the same line (the journal's, say): it waits the rest of the floor.
  assert.equal(floors.waitFor({ ...delivery('k1'), id: 'local:7.hook' }), 3000);
  // Other lines are not held: another key, another adapter, another tenant.
  assert.equal(floors.waitFor(delivery('k2')), 0);
  assert.equal(floors.waitFor(delivery('k1', 'snow')), 0);
  assert.equal(floors.waitFor(delivery('k1', 'hook', 'acme')), 0);
  now += 2000;
  assert.equal(floors.waitFor(delivery('k1')), 1000);
  // A shorter wait answered later never shortens the floor.
  floors.note(delivery('k1'), 10);
  assert.equal(floors.waitFor(delivery('k1')), 1000);
  now += 1000;
  assert.equal(floors.waitFor(delivery('k1')), 0, 'over: the line may go');
});

test('floors are bounded: past the bound the passed ones go first, then the oldest', () => {
  let now = 0;
  const floors = new ReceiverFloors(() => now);
  for (let i = 0; i < 100_000; i++) floors.note(delivery(`k${i}`), i < 50_000 ? 1 : 60_000);
  now = 10;
  floors.note(delivery('new'), 60_000);
  assert.equal(floors.waitFor(delivery('k0')), 0, 'a passed floor was let go');
  assert.ok(floors.waitFor(delivery('k99999')) > 0, 'a running one kept');
  assert.ok(floors.waitFor(delivery('new')) > 0);
});
