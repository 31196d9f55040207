import type { Command } from 'commander';
import { BackupError, backupSqlite } from '../store/sqlite/backup.js';
import { sqliteFileOf } from '../store/open.js';

/** `onceonly backup --store sqlite:PATH FILE`: a consistent copy of a live SQLite store. */
export function backupCommand(program: Command): void {
  program
    .command('backup')
    .description('copy a SQLite store, live or not, to FILE (a new file): a consistent copy that serves as it is (Redis and Postgres: docs/deploy.md)')
    .requiredOption('--store <url>', 'sqlite:PATH (env ONCEONLY_STORE)', process.env.ONCEONLY_STORE)
    .argument('<file>', 'where the copy goes; must not exist')
    .action(async (file: string, o: { store: string }) => {
      const source = sqliteFileOf(o.store);
      if (source === null) {
        process.stderr.write(
          `onceonly backup: only a sqlite: store is copied by this command; back up Redis and Postgres with their own tools (docs/deploy.md, "Backups")\n`,
        );
        process.exitCode = 2;
        return;
      }
      try {
        const { pages, schemaVersion } = await backupSqlite(source, file);
        process.stdout.write(`${file}: ${pages} pages copied from ${source} (schema version ${schemaVersion})\n`);
      } catch (err) {
        if (!(err instanceof BackupError)) throw err;
        process.stderr.write(`onceonly backup: ${err.message}\n`);
        process.exitCode = 2;
      }
    });
}
