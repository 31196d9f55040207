import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { manualClock } from '../../src/core/clock.js';
import { sweepUntilDone } from '../../src/app/sweeper.js';
import { SWEEP_BATCH } from '../../src/store/contract/index.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { tempDir } from '../helpers/tmp.js';
import { startSink } from '../fakes/http-fake.js';
import { inProcessServer } from '../helpers/server.js';
import { caughtUp } from '../helpers/settle.js';
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
    await caughtUp(s);
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

// What a soak found: one batch per interval fell behind a load that expires
// more than a batch a minute, and the incidents table grew without end.
test('a sweep pass takes batch after batch until nothing expired is left, and leaves what lives', async () => {
  const dir = tempDir();
  const clock = manualClock(Date.now());
  const store = new SqliteStore(join(dir.path, 's.db'), clock, { expiredGraceMs: 0 });
  const count = () => (store.database.prepare('SELECT count(*) AS n FROM incidents').get() as { n: number }).n;
  try {
    const expired = Math.round(SWEEP_BATCH * 2.5);
    await Promise.all(
      Array.from({ length: expired }, (_, i) => store.incidents.decide({ tenant: 't', key: `dedup:old-${i}`, fingerprint: 'MAJOR|0', ttlMs: 1000 })),
    );
    clock.advance(2000);
    await store.incidents.decide({ tenant: 't', key: 'dedup:live', fingerprint: 'MAJOR|0', ttlMs: 60_000 });
    assert.equal(count(), expired + 1);
    const swept = await sweepUntilDone(store);
    assert.equal(swept, expired, 'every expired incident, in one pass');
    assert.equal(count(), 1);
    assert.ok(await store.incidents.get('t', 'dedup:live'), 'the live one stays');
    assert.equal(await sweepUntilDone(store), 0, 'a pass with nothing to do ends at once');
    // A pass is bounded: with rounds for one batch, one batch goes.
    await Promise.all(
      Array.from({ length: expired }, (_, i) => store.incidents.decide({ tenant: 't', key: `dedup:again-${i}`, fingerprint: 'MAJOR|0', ttlMs: 1000 })),
    );
    clock.advance(2000);
    assert.equal(await sweepUntilDone(store, () => false, 1), SWEEP_BATCH);
    assert.equal(await sweepUntilDone(store, () => true), 0, 'a stopping server sweeps no more');
  } finally {
    await store.close();
    dir.remove();
  }
});
