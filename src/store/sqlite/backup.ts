import { existsSync } from 'node:fs';
import Database from 'better-sqlite3';
import { newerSchema } from './migrate.js';

export class BackupError extends Error {
  override name = 'BackupError';
}

/**
 * Copies a SQLite store that may be serving to `dest`, a file that must not
 * exist yet, with SQLite's online backup API: the copy is the database as
 * one transaction saw it. It is taken in one step, under one read
 * transaction: in WAL mode the servers go on writing meanwhile, and a
 * copy taken page by page would start over at every write another process
 * commits, never finishing under load. Returns the pages copied.
 */
export async function backupSqlite(source: string, dest: string): Promise<{ pages: number; schemaVersion: number }> {
  if (!existsSync(source)) throw new BackupError(`${source} does not exist`);
  if (existsSync(dest)) throw new BackupError(`${dest} exists already: a backup never overwrites a file`);
  let db: Database.Database;
  try {
    db = new Database(source, { readonly: true, fileMustExist: true, timeout: 5000 });
  } catch (err) {
    throw new BackupError(`cannot open ${source}: ${(err as Error).message}`);
  }
  try {
    const schemaVersion = db.pragma('user_version', { simple: true }) as number;
    if (schemaVersion === 0) throw new BackupError(`${source} is not an onceonly store (it has no schema)`);
    const newer = newerSchema(source, schemaVersion);
    if (newer) throw new BackupError(`${newer}: back it up with a newer onceonly`);
    const done = await db.backup(dest, { progress: () => 0x7fffffff }).catch((err: Error) => {
      throw new BackupError(`cannot write ${dest}: ${err.message}`);
    });
    return { pages: done.totalPages, schemaVersion };
  } finally {
    db.close();
  }
}
