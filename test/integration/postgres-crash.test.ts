// needs: postgres
/**
 * The private Postgres the nemesis crashes: a crash (`pg_ctl stop -m
 * immediate`) loses nothing committed, and the server takes connections
 * again on the same port after its recovery.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { startPostgres } from '../helpers/postgres-server.js';

test('a Postgres of its own survives a crash with what it committed', async () => {
  const server = await startPostgres();
  try {
    const query = async (sql: string) => {
      const c = new pg.Client({ connectionString: server.url });
      await c.connect();
      try {
        return (await c.query(sql)).rows;
      } finally {
        await c.end();
      }
    };
    await query('CREATE TABLE kept (n int)');
    await query('INSERT INTO kept VALUES (1), (2)');
    await server.crash();
    await assert.rejects(query('SELECT 1'), 'a crashed server takes no connection');
    await server.start();
    assert.deepEqual(await query('SELECT n FROM kept ORDER BY n'), [{ n: 1 }, { n: 2 }]);
  } finally {
    await server.stop();
  }
});
