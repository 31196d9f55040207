import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { systemClock } from '../../src/core/clock.js';
import { tempDir } from '../../test/helpers/tmp.js';
import { PgStore } from '../../src/store/postgres/pg-store.js';
import { openPool, transaction } from '../../src/store/postgres/pool.js';
import { keyLock } from '../../src/store/postgres/pg-db.js';
import { type IncidentRecord, nextIncidentRecord } from '../../src/store/contract/index.js';
import { incidentAction } from '../../src/core/outbox.js';
import { REQUEUE_FAILING } from '../../src/store/sql/deliveries.js';
import { bind, forPg } from '../../src/store/sql/named.js';
import type pg from 'pg';
import { freshSchema, PG_URL } from '../../test/helpers/postgres.js';
import { GRACE_MS, OUTBOX, TENANT, TTL_MS, type Backend } from './backend.js';
import type { IncidentOp } from '../workload.js';

const POOL = 16;

const SQL = {
  select: `SELECT fingerprint, created_at AS "createdAt", last_seen_at AS "lastSeenAt", refires, updates, expires_at AS "expiresAt" FROM incidents WHERE tenant = $1 AND key = $2`,
  upsert: `INSERT INTO incidents (tenant, key, fingerprint, created_at, last_seen_at, refires, updates, expires_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
ON CONFLICT (tenant, key) DO UPDATE SET fingerprint = excluded.fingerprint, created_at = excluded.created_at, last_seen_at = excluded.last_seen_at,
  refires = excluded.refires, updates = excluded.updates, expires_at = excluded.expires_at`,
  /** The store's own re-queue statement, as the deliveries facet shares it. */
  requeue: forPg(REQUEUE_FAILING),
  outbox: `INSERT INTO outbox (tenant, kind, action, key, severity, summary, data, at) VALUES ($1, 'incident', $2, $3, $4, $5, $6, $7)`,
};

/**
 * Postgres alone, no Node in the way: pgbench (16 clients, 2 threads, 10 s)
 * running one statement over 100,000 keys, transactions/s. What the server
 * does with the function and with the bare upsert, to tell its cost from
 * the client's.
 */
export function pgbench(schema: string, statement: string): number {
  const dir = tempDir('onceonly-bench-pgbench-');
  try {
    const script = `${dir.path}/script.sql`;
    writeFileSync(script, `\\set k random(1, 100000)\n\\set f random(0, 9)\n${statement};\n`);
    const out = execFileSync('pgbench', ['-n', '-c', '16', '-j', '2', '-T', '10', '-M', 'simple', '-f', script, PG_URL], {
      encoding: 'utf8',
      env: { ...process.env, PGOPTIONS: `-c search_path=${schema}` },
    });
    const m = /tps = ([\d.]+)/.exec(out);
    if (!m) throw new Error(`pgbench printed no rate: ${out.slice(-300)}`);
    return Math.round(Number(m[1]));
  } finally {
    dir.remove();
  }
}

const KEY = `'dedup:' || (:k)::text`;
export const PGBENCH = {
  decide: `SELECT * FROM oo_decide_incident('${TENANT.length}:${TENANT}' || ${KEY}, '${TENANT}', ${KEY}, CASE WHEN (:f)::int = 0 THEN 'MINOR|0' ELSE 'MAJOR|0' END,
  ${TTL_MS}, ${GRACE_MS}, (extract(epoch FROM clock_timestamp()) * 1000)::bigint, NULL, '${OUTBOX.severity}', '${OUTBOX.summary}', '${JSON.stringify(OUTBOX.data)}', NULL, '', 'none')`,
  bare: `INSERT INTO ceil (key, fp, last_seen_at, refires) VALUES (${KEY}, 'MAJOR|0', 1, 0)
  ON CONFLICT (key) DO UPDATE SET fp = excluded.fp, last_seen_at = excluded.last_seen_at, refires = ceil.refires + 1`,
};

/** One decision in seven round trips, under the same lock the store takes. */
function statements(pool: pg.Pool, { key, fp }: IncidentOp) {
  return transaction(pool, keyLock(TENANT, key), async (c) => {
    const now = Date.now();
    const row = (await c.query<IncidentRecord>(SQL.select, [TENANT, key])).rows[0] ?? null;
    const existing = row && row.expiresAt + GRACE_MS > now ? { ...row, tenant: TENANT, key } : null;
    const claim = { tenant: TENANT, key, fingerprint: fp, ttlMs: TTL_MS, outbox: OUTBOX };
    const { record: r, outcome } = nextIncidentRecord(existing, claim, now);
    await c.query(SQL.upsert, [TENANT, key, r.fingerprint, r.createdAt, r.lastSeenAt, r.refires, r.updates, r.expiresAt]);
    if (outcome.kind !== 'created') await c.query(SQL.requeue.text, bind(SQL.requeue, { kind: 'incident', tenant: TENANT, key, now }));
    const action = incidentAction(outcome.kind);
    if (action) await c.query(SQL.outbox, [TENANT, action, key, OUTBOX.severity, OUTBOX.summary, JSON.stringify(OUTBOX.data), now]);
  });
}

/**
 * The machine's Postgres, in a schema of its own dropped afterwards, with
 * synchronous_commit as the server has it. The naive algorithm and the
 * ceiling use a second pool of the same size on the same schema.
 */
export async function postgresBackend(): Promise<Backend> {
  const s = await freshSchema();
  const pool = openPool(PG_URL, s.schema, POOL);
  const store = new PgStore(pool, systemClock, { expiredGraceMs: GRACE_MS, schema: s.schema });
  await store.init?.();
  const raw = openPool(PG_URL, s.schema, POOL);
  await raw.query('CREATE TABLE naive (key text PRIMARY KEY, fp text NOT NULL, expires_at bigint NOT NULL)');
  await raw.query('CREATE TABLE ceil (key text PRIMARY KEY, fp text NOT NULL, last_seen_at bigint NOT NULL, refires int NOT NULL)');
  return {
    name: 'postgres',
    store,
    inflight: 64,
    // The naive steps in SQL: claim if absent; on a hit read, compare and write (racy: no lock).
    async naive({ key, fp }) {
      const now = Date.now();
      const claimed = await raw.query('INSERT INTO naive (key, fp, expires_at) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING', [key, fp, now + TTL_MS]);
      if (claimed.rowCount === 1) return 'CREATE';
      const { rows } = await raw.query<{ fp: string }>('SELECT fp FROM naive WHERE key = $1', [key]);
      await raw.query('UPDATE naive SET fp = $2, expires_at = $3 WHERE key = $1', [key, fp, now + TTL_MS]);
      return rows[0]?.fp === fp ? 'SUPPRESS' : 'UPDATE';
    },
    // Today's decision against its predecessor: the same rule as one
    // transaction of separate statements (BEGIN, the key's lock, select,
    // upsert, re-queue, outbox, COMMIT), as the store made it before the
    // server-side functions of migration 006.
    extra: [{ label: 'the same decision as a transaction of separate statements (before migration 006)', run: (op) => statements(raw, op) }],
    serverSide: () => [
      { label: 'oo_decide_incident, by pgbench', rate: pgbench(s.schema, PGBENCH.decide) },
      { label: 'the bare INSERT … ON CONFLICT, by pgbench', rate: pgbench(s.schema, PGBENCH.bare) },
    ],
    ceiling: {
      label: 'bare INSERT … ON CONFLICT, one statement',
      run: ({ key, fp }) =>
        raw.query(
          'INSERT INTO ceil (key, fp, last_seen_at, refires) VALUES ($1, $2, $3, 0) ON CONFLICT (key) DO UPDATE SET fp = excluded.fp, last_seen_at = excluded.last_seen_at, refires = ceil.refires + 1',
          [key, fp, Date.now()],
        ),
    },
    async close() {
      await store.close();
      await raw.end();
      await s.drop();
    },
  };
}
