import { systemClock } from '../../src/core/clock.js';
import { PgStore } from '../../src/store/postgres/pg-store.js';
import { openPool } from '../../src/store/postgres/pool.js';
import { freshSchema, PG_URL } from '../../test/helpers/postgres.js';
import { GRACE_MS, TTL_MS, type Backend } from './backend.js';

const POOL = 16;

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
