import pg from 'pg';
import type { Clock } from '../../src/core/clock.js';
import { migrate } from '../../src/store/postgres/migrate.js';
import { openPool } from '../../src/store/postgres/pool.js';
import { PgStore } from '../../src/store/postgres/pg-store.js';

/** The machine's Postgres (trust auth; npm test's pretest starts it when it is down). */
export const PG_URL = process.env.ONCEONLY_TEST_PG ?? 'postgres://postgres@127.0.0.1:5432/test';

let seq = 0;

/** Drops a schema a test made, with all it holds (a schema name is never quoted by the caller: it is ours). */
export async function dropSchema(schema: string): Promise<void> {
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  try {
    await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  } finally {
    await admin.end();
  }
}

/** A schema of its own for one test, migrated; `drop` removes it. */
export async function freshSchema(): Promise<{ schema: string; open: (clock: Clock, grace?: number) => PgStore; drop: () => Promise<void> }> {
  const schema = `oo_t_${process.pid}_${Date.now() % 1e8}_${++seq}`;
  const admin = new pg.Pool({ connectionString: PG_URL, max: 1 });
  const pool = openPool(PG_URL, schema, 2);
  await migrate(pool, schema);
  await pool.end();
  return {
    schema,
    open: (clock, grace) => new PgStore(openPool(PG_URL, schema, 8), clock, { expiredGraceMs: grace }),
    async drop() {
      await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await admin.end();
    },
  };
}
