import type { Command } from 'commander';
import { migrate } from '../store/postgres/migrate.js';
import { openPool } from '../store/postgres/pool.js';
import { isPostgresUrl, postgresUrl, StoreUrlError } from '../store/open.js';

/** `onceonly migrate --store postgres://…`: apply the schema migrations not yet applied, and say which. */
export function migrateCommand(program: Command): void {
  program
    .command('migrate')
    .description('apply the Postgres schema migrations not yet applied (serve does it at start too)')
    .requiredOption('--store <url>', 'postgres://user@host:port/db[?schema=onceonly] (env ONCEONLY_STORE)', process.env.ONCEONLY_STORE)
    .action(async (o: { store: string }) => {
      if (!isPostgresUrl(o.store)) {
        process.stderr.write(
          'onceonly migrate: only postgres:// stores are migrated by this command (a SQLite file migrates itself when opened; Redis needs none)\n',
        );
        process.exitCode = 2;
        return;
      }
      let pool: ReturnType<typeof openPool> | undefined;
      try {
        const { connection, schema } = postgresUrl(o.store);
        pool = openPool(connection, schema, 1);
        const applied = await migrate(pool, schema);
        process.stdout.write(applied.length ? `applied to schema ${schema}: ${applied.join(', ')}\n` : `schema ${schema} is up to date\n`);
      } catch (err) {
        process.stderr.write(`onceonly migrate: ${(err as Error).message}\n`);
        process.exitCode = err instanceof StoreUrlError ? 2 : 1;
      } finally {
        await pool?.end();
      }
    });
}
