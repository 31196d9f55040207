import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { startSink } from '../fakes/http-fake.js';
import { inProcessServer } from '../helpers/server.js';
import { receiverQuiet } from '../helpers/settle.js';
import { until } from '../helpers/wait.js';

/**
 * The server's sweeper, as it runs: on its own timer, against the store the
 * server serves, on the server's (manual) clock. What outlived its lifetime
 * goes, and nothing else: an expired incident once past the grace, an old
 * dead letter once past the retention (which lets its key's later
 * deliveries go, as a drop does).
 */

test('the sweeper deletes an incident once past its TTL and grace, and nothing still live', async () => {
  const s = await inProcessServer({ config: 'incidents: { ttl_seconds: 60, expired_grace_seconds: 30 }\n', sweepIntervalMs: 25 });
  const rows = () => (s.store as SqliteStore).database.prepare('SELECT count(*) AS n FROM incidents').get() as { n: number };
  try {
    await s.post('/v1/incidents', { element_id: 'old', fault_class: 'LOS', root_cause_id: 'c', severity: 'MAJOR' });
    s.clock.advance(70_000); // expired 10 s ago: inside the grace, kept to report a premature expiry
    const fresh = (await s.post('/v1/incidents', { element_id: 'new', fault_class: 'LOS', root_cause_id: 'c', severity: 'MAJOR' })).body.dedup_key;
    // (That nothing is swept inside the grace is a store contract case, on every backend.)
    assert.equal(rows().n, 2);
    s.clock.advance(25_000); // the old one is past TTL + grace; the new one has 35 s to live
    await until(
      () => rows().n === 1,
      5000,
      () => `${rows().n} rows`,
    );
    assert.equal((await s.get('/v1/incidents')).body.incidents.length, 1);
    assert.equal((await s.get('/v1/incidents')).body.incidents[0].dedup_key, fresh, 'the live one stays');
  } finally {
    await s.stop();
  }
});

test('the sweeper deletes a dead letter past its retention, and the key’s later delivery waiting behind it goes', async () => {
  const hook = await startSink(200, {});
  hook.faults = (r) => (r.body?.action === 'create' ? { status: 400, body: { error: 'refused' } } : 'ok');
  const s = await inProcessServer({
    config: `delivery: { max_retries: 0, dead_letter_retention_days: 1 }\nadapters: [ { name: hook, type: webhook, url: "${hook.url}/in" } ]\n`,
    sweepIntervalMs: 25,
  });
  try {
    const { dedup_key: key } = (await s.post('/v1/incidents', { element_id: 'e', fault_class: 'LOS', root_cause_id: 'c', severity: 'MAJOR' })).body;
    await until(
      async () => (await s.get('/v1/dead-letters')).body.dead_letters.length === 1,
      10_000,
      () => 'the create never went dead',
    );
    assert.equal((await s.del(`/v1/incidents/${key}`)).status, 204);
    s.clock.advance(12 * 3_600_000); // half the retention
    await receiverQuiet(() => hook.requests, 300);
    const held = (await s.get('/v1/dead-letters')).body.dead_letters;
    assert.deepEqual(
      held.map((d: { waiting: number }) => d.waiting),
      [1],
      'kept within the retention, the close waiting behind it',
    );
    assert.ok(!hook.requests.some((r) => r.body?.action === 'close'));
    s.clock.advance(13 * 3_600_000); // past the retention
    await until(
      async () => (await s.get('/v1/dead-letters')).body.dead_letters.length === 0,
      5000,
      () => 'the old dead letter was never swept',
    );
    await until(
      () => hook.requests.some((r) => r.body?.action === 'close'),
      10_000,
      () => 'the close never went',
    );
    assert.deepEqual(
      hook.requests.map((r) => r.body.action),
      ['create', 'close'],
      'the swept create is not sent again; the close went once',
    );
  } finally {
    await s.stop();
    await hook.close();
  }
});
