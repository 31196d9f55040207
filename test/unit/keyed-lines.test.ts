import { test } from 'node:test';
import assert from 'node:assert/strict';
import { KeyedLines } from '../../src/ingest/keyed-lines.js';
import { orderKey } from '../../src/ingest/order-key.js';

const tick = () => new Promise((r) => setImmediate(r));

test('keyed lines: one key in the order admitted, other keys side by side, never more than width at once', async () => {
  const log: string[] = [];
  let running = 0;
  let most = 0;
  const gates = new Map<string, () => void>();
  const lines = new KeyedLines<{ key: string | null; id: string }>(
    3,
    (t) => t.key,
    async (t) => {
      running++;
      most = Math.max(most, running);
      log.push(`start ${t.id}`);
      await new Promise<void>((r) => gates.set(t.id, r));
      log.push(`end ${t.id}`);
      running--;
    },
  );
  await lines.admit({ key: 'a', id: 'a1' });
  await lines.admit({ key: 'a', id: 'a2' });
  await lines.admit({ key: 'b', id: 'b1' });
  await tick();
  assert.deepEqual(log, ['start a1', 'start b1'], 'a2 waits behind a1; b1 runs beside it');
  // Width 3 is taken (a1, a2 waiting, b1): the next admit waits until one ends.
  let admitted = false;
  const fourth = lines.admit({ key: null, id: 'x' }).then(() => (admitted = true));
  await tick();
  assert.equal(admitted, false, 'no room: the fourth waits');
  gates.get('b1')!();
  await fourth;
  await tick();
  assert.ok(log.includes('start x'));
  gates.get('a1')!();
  await tick();
  await tick();
  assert.deepEqual(log.slice(log.indexOf('end a1')), ['end a1', 'start a2'], 'a2 starts once a1 ended');
  gates.get('a2')!();
  gates.get('x')!();
  await lines.idle();
  assert.equal(lines.size, 0);
  assert.ok(most <= 3, `at most width ran at once (${most})`);
});

test('keyed lines: a task that throws does not stop its line', async () => {
  const done: string[] = [];
  const lines = new KeyedLines<string>(
    4,
    () => 'k',
    async (id) => {
      if (id === 'bad') throw new Error('boom');
      done.push(id);
    },
  );
  for (const id of ['one', 'bad', 'two']) await lines.admit(id);
  await lines.idle();
  assert.deepEqual(done, ['one', 'two']);
  assert.throws(
    () =>
      new KeyedLines(
        0,
        () => null,
        async () => {},
      ),
    /width must be a whole number/,
  );
});

test("order keys: one incident's, device's and chart's messages share a line; others, and bodies that are no object, do not", () => {
  const b = (o: unknown) => Buffer.from(typeof o === 'string' ? o : JSON.stringify(o));
  const inc = { element_id: 'olt-1', fault_class: 'LOS', root_cause_id: 'cut', severity: 'MAJOR' };
  assert.equal(orderKey('incident', b(inc)), orderKey('incident', b({ ...inc, severity: 'CRITICAL', cleared: true })));
  assert.notEqual(orderKey('incident', b(inc)), orderKey('incident', b({ ...inc, element_id: 'olt-2' })));
  // A separator inside a value cannot make two identities one line.
  assert.notEqual(
    orderKey('incident', b({ element_id: 'a|b', fault_class: 'c', root_cause_id: 'd' })),
    orderKey('incident', b({ element_id: 'a', fault_class: 'b|c', root_cause_id: 'd' })),
  );
  const ev = { tenant_id: 't', device_id: 'pos-1', boot_id: 'b1', sequence: 1 };
  assert.equal(orderKey('event', b(ev)), orderKey('event', b({ ...ev, sequence: 2, boot_id: 'b2' })));
  assert.notEqual(orderKey('event', b(ev)), orderKey('event', b({ ...ev, tenant_id: 'u' })));
  assert.equal(orderKey('violation', b({ process_id: 'p', rule_id: 'r', value: 1 })), orderKey('violation', b({ process_id: 'p', rule_id: 'r', value: 2 })));
  assert.notEqual(orderKey('incident', b(inc)), orderKey('violation', b(inc)), 'kinds never share a line');
  assert.equal(orderKey('alertmanager', b({ alerts: [] })), orderKey('alertmanager', b('not json')), 'every Alertmanager payload: one line');
  for (const body of ['not json', '[1,2]', 'null', '"x"']) assert.equal(orderKey('incident', b(body)), null, body);
});
