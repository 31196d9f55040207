import { readdirSync, readFileSync } from 'node:fs';
import type { Pool } from 'pg';

const DIR = new URL('./migrations/', import.meta.url);

/**
 * Numbered, append-only migrations (migrations/NNN_name.sql), each applied
 * once in its own transaction and recorded in schema_migrations. An advisory
 * lock makes replicas that start together apply them one at a time.
 */
export async function migrate(pool: Pool, schema: string): Promise<string[]> {
  const files = readdirSync(DIR)
    .filter((f) => /^\d{3}_[a-z0-9_]+\.sql$/.test(f))
    .sort();
  const client = await pool.connect();
  // A checked-out connection that dies (a reset while migrating) emits 'error' on itself, which the pool
  // does not listen for there: unheard, it took the process down. The failed query rejects too, which is what counts.
  const unheard = () => {};
  client.on('error', unheard);
  let broken = false;
  const applied: string[] = [];
  try {
    // The lock comes first: two replicas' CREATE SCHEMA IF NOT EXISTS at the same moment can both find no
    // schema and the second fail on the catalog's unique index (seen as a replica exiting at start-up).
    await client.query('SELECT pg_advisory_lock(hashtext($1))', [`onceonly-migrate:${schema}`]);
    try {
      await client.query(`CREATE SCHEMA IF NOT EXISTS ${ident(schema)}`);
      await client.query(
        `CREATE TABLE IF NOT EXISTS ${ident(schema)}.schema_migrations (name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`,
      );
      const done = new Set((await client.query<{ name: string }>(`SELECT name FROM ${ident(schema)}.schema_migrations`)).rows.map((r) => r.name));
      for (const f of files) {
        if (done.has(f)) continue;
        await client.query('BEGIN');
        try {
          await client.query(`SET LOCAL search_path TO ${ident(schema)}`);
          await client.query(readFileSync(new URL(f, DIR), 'utf8'));
          await client.query(`INSERT INTO ${ident(schema)}.schema_migrations (name) VALUES ($1)`, [f]);
          await client.query('COMMIT');
          applied.push(f);
        } catch (err) {
          await client.query('ROLLBACK');
          throw new Error(`migration ${f} failed: ${(err as Error).message}`);
        }
      }
    } finally {
      await client.query('SELECT pg_advisory_unlock(hashtext($1))', [`onceonly-migrate:${schema}`]);
    }
  } catch (err) {
    broken = true;
    throw err;
  } finally {
    client.off('error', unheard);
    // A connection that failed here is not given back to the pool (it may hold the lock, or be dead).
    client.release(broken);
  }
  return applied;
}

/** What a schema name may be: an unquoted Postgres identifier, so it never needs escaping. */
export const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

/** A schema name, quoted as an SQL identifier. */
export function ident(name: string): string {
  if (!SCHEMA_NAME.test(name)) throw new Error(`schema name ${JSON.stringify(name)} must be lower-case letters, digits and _`);
  return `"${name}"`;
}
