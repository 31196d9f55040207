// needs: postgres
import { readdirSync } from 'node:fs';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import type { ManualClock } from '../../src/core/clock.js';
import { manualClock } from '../../src/core/clock.js';
import { GRACE_UNITS, type StoreFixture } from './incident-store.contract.js';
import { everyFacetContract } from './every-facet.js';
import { rulesContract } from './rules.contract.js';
import { freshSchema, PG_URL } from '../helpers/postgres.js';
import { openPool } from '../../src/store/postgres/pool.js';
import { migrate } from '../../src/store/postgres/migrate.js';

// The real Postgres on 5432; every test in a schema of its own, dropped after.
const unit = 1000;
const fixture = async (clock: ManualClock): Promise<StoreFixture> => {
  const s = await freshSchema();
  return {
    store: s.open(clock, GRACE_UNITS * unit),
    openPeer: () => s.open(clock, GRACE_UNITS * unit),
    clock,
    unit,
    advance: async (ms) => clock.advance(ms),
    cleanup: s.drop,
  };
};

everyFacetContract('postgres', { peers: true, sweepsOnClock: true, replays: true }, fixture);
rulesContract('postgres', fixture);

test('postgres: migrations are numbered, applied once, and replicas starting together apply them once', async () => {
  const s = await freshSchema();
  try {
    const pools = [openPool(PG_URL, s.schema, 1), openPool(PG_URL, s.schema, 1)];
    const again = await Promise.all(pools.map((p) => migrate(p, s.schema)));
    assert.deepEqual(again, [[], []], 'already applied by freshSchema: nothing to do, and no error when two run at once');
    const names = (await pools[0]!.query<{ name: string }>('SELECT name FROM schema_migrations ORDER BY name')).rows.map((r) => r.name);
    const files = readdirSync(new URL('../../src/store/postgres/migrations/', import.meta.url))
      .filter((f) => /^\d{3}_[a-z0-9_]+\.sql$/.test(f))
      .sort();
    assert.deepEqual(files.slice(0, 5), ['001_initial.sql', '002_audit.sql', '003_reconcile.sql', '004_counter_used_at.sql', '005_requests.sql']);
    assert.deepEqual(names, files, 'every migration recorded once, in order');
    await Promise.all(pools.map((p) => p.end()));
    const store = s.open(manualClock());
    await store.incidents.decide({ tenant: 't', key: 'k', fingerprint: 'MAJOR|0', ttlMs: 60_000 });
    assert.equal(await store.queries.countLiveIncidents(), 1);
    await store.close();
  } finally {
    await s.drop();
  }
});

test('postgres: replicas starting together on a database that has no schema yet: one makes and migrates it, none fails', async () => {
  const files = readdirSync(new URL('../../src/store/postgres/migrations/', import.meta.url))
    .filter((f) => /^\d{3}_[a-z0-9_]+\.sql$/.test(f))
    .sort();
  const admin = new pg.Pool({ connectionString: PG_URL, max: 1 });
  try {
    // Several rounds, each on a schema nobody has made: two CREATE SCHEMA IF NOT EXISTS at the same moment
    // used to fail the second on the catalog's unique index.
    for (let round = 0; round < 10; round++) {
      const schema = `oo_race_${process.pid}_${Date.now() % 1e8}_${round}`;
      const pools = Array.from({ length: 6 }, () => openPool(PG_URL, schema, 1));
      try {
        const applied = await Promise.all(pools.map((p) => migrate(p, schema)));
        assert.deepEqual(
          applied.map((a) => a.length).sort((x, y) => y - x),
          [files.length, 0, 0, 0, 0, 0],
          'one replica applied every migration, the others found them done',
        );
      } finally {
        await Promise.all(pools.map((p) => p.end()));
        await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      }
    }
  } finally {
    await admin.end();
  }
});

test('postgres: every silence write leaves an audit row in its own transaction (who, which request), a refused one none', async () => {
  const clock = manualClock();
  const s = await freshSchema();
  const store = s.open(clock, GRACE_UNITS * unit);
  try {
    const now = clock.now();
    const silence = {
      id: '5b7c0c7e-0000-4000-8000-000000000001',
      tenant: 't',
      matchers: [{ name: 'kind', value: 'incident', isRegex: false, isEqual: true }],
      startsAt: now,
      endsAt: now + 3_600_000,
      createdBy: 'alice',
      comment: 'c',
      updatedAt: now,
    };
    assert.equal(await store.silences.create(silence, { open: 10, ended: 1000 }, now, { requestId: 'req-1' }), true);
    assert.equal(
      await store.silences.create({ ...silence, id: '5b7c0c7e-0000-4000-8000-000000000002' }, { open: 1, ended: 1000 }, now, { requestId: 'req-refused' }),
      false,
    );
    assert.equal(await store.silences.update({ ...silence, createdBy: 'bob', comment: 'longer' }, now + 1, { requestId: 'req-2' }), 'updated');
    assert.equal(await store.silences.expire('t', silence.id, now + 2, { requestId: 'req-3' }), true);
    assert.equal(await store.silences.expire('t', silence.id, now + 3, { requestId: 'req-again' }), true, 'already ended: no change, no row');
    const rows = await store.queries.auditTrail!('t', silence.id, 10);
    assert.deepEqual(
      rows.map((r) => [r.kind, r.decision, r.reason, r.requestId, r.at]),
      [
        ['silence', 'CREATE', 'alice', 'req-1', now],
        ['silence', 'UPDATE', 'bob', 'req-2', now + 1],
        ['silence', 'EXPIRE', 'expired through the API', 'req-3', now + 2],
      ],
    );
    assert.deepEqual(await store.queries.auditTrail!('t', '5b7c0c7e-0000-4000-8000-000000000002', 10), [], 'the refused create left nothing');
  } finally {
    await store.close();
    await s.drop();
  }
});

test('postgres: a key whose oldest outbox entry another replica is fanning out waits; its deliveries are numbered in the order decided', async () => {
  const s = await freshSchema();
  const store = s.open(manualClock(Date.now()));
  const other = new pg.Client({ connectionString: PG_URL });
  await other.connect();
  try {
    const key = 'dedup:order';
    const decide = (severity: string) =>
      store.incidents.decide({ tenant: 't', key, fingerprint: `${severity}|0`, ttlMs: 60_000, outbox: { severity, summary: severity, data: {} } });
    await decide('MAJOR');
    await decide('CRITICAL');
    await decide('MINOR');
    // Another replica has taken the key's create and not committed yet.
    await other.query('BEGIN');
    await other.query(`DELETE FROM "${s.schema}".outbox WHERE id = (SELECT min(id) FROM "${s.schema}".outbox WHERE key = $1)`, [key]);
    assert.equal(await store.deliveries.fanOut(['hook'], 100), 0, 'the younger entries wait behind the one being fanned out');
    // That replica died before committing: its entry is back, and the three go out numbered in order.
    await other.query('ROLLBACK');
    assert.equal(await store.deliveries.fanOut(['hook'], 100), 3);
    const leased = await store.deliveries.leaseDue('me', 60_000, 100);
    assert.deepEqual(
      leased.map((d) => [d.entry.action, d.n, d.entry.severity]),
      [['create', 1, 'MAJOR']],
      'one delivery of a key at a time, the oldest',
    );
    const rows = await other.query<{ action: string; n: number; severity: string }>(
      `SELECT action, n, severity FROM "${s.schema}".deliveries WHERE key = $1 ORDER BY split_part(id, '.', 1)::bigint`,
      [key],
    );
    assert.deepEqual(
      rows.rows.map((r) => [r.action, Number(r.n), r.severity]),
      [
        ['create', 1, 'MAJOR'],
        ['update', 1, 'CRITICAL'],
        ['update', 2, 'MINOR'],
      ],
    );
  } finally {
    await other.end();
    await store.close();
    await s.drop();
  }
});

test('postgres: a key whose outbox entries straddle a power of ten (ids 9 and 10) is fanned out, not held behind itself', async () => {
  // Sorted as text, '10' comes before '9': the fan-out once took 10 for the key's oldest row, found 9
  // older, and held the key on every pass, for good (a silent loss the nemesis found past id 99).
  const s = await freshSchema();
  const store = s.open(manualClock(Date.now()));
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  try {
    await admin.query(`SELECT setval(pg_get_serial_sequence('"${s.schema}".outbox', 'id'), 8)`);
    const key = 'dedup:straddle';
    await store.incidents.decide({ tenant: 't', key, fingerprint: 'MAJOR|0', ttlMs: 60_000, outbox: { severity: 'MAJOR', summary: '', data: {} } });
    await store.incidents.decide({ tenant: 't', key, fingerprint: 'CRITICAL|0', ttlMs: 60_000, outbox: { severity: 'CRITICAL', summary: '', data: {} } });
    const ids = (await admin.query<{ id: string }>(`SELECT o.id::text AS id FROM "${s.schema}".outbox o ORDER BY o.id`)).rows.map((r) => r.id);
    assert.deepEqual(ids, ['9', '10'], 'the two entries are 9 and 10');
    assert.equal(await store.deliveries.fanOut(['hook'], 100), 2, 'both taken in one pass');
    const leased = await store.deliveries.leaseDue('me', 60_000, 100);
    assert.deepEqual(
      leased.map((d) => [d.entry.action, d.n, d.entry.severity]),
      [['create', 1, 'MAJOR']],
    );
  } finally {
    await admin.end();
    await store.close();
    await s.drop();
  }
});
