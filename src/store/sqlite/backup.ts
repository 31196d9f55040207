import { closeSync, constants, existsSync, openSync, rmSync } from 'node:fs';
import Database from 'better-sqlite3';
import { newerSchema } from './migrate.js';

export class BackupError extends Error {
  readonly code = 'backup_failed';
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
  // The copy's file is made here, new and private: O_EXCL refuses anything already at that path, a
  // dangling symlink included (which would send the copy wherever it points), and 0600 keeps the
  // tickets' data to its owner. SQLite then writes the copy into that empty file.
  try {
    closeSync(openSync(dest, constants.O_CREAT | constants.O_EXCL | constants.O_WRONLY | constants.O_NOFOLLOW, 0o600));
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EEXIST' || code === 'ELOOP') throw new BackupError(`${dest} exists already: a backup never overwrites a file`);
    throw new BackupError(`cannot write ${dest}: ${(err as Error).message}`);
  }
  let made = false;
  try {
    const result = await copyInto(source, dest);
    made = true;
    return result;
  } finally {
    if (!made) rmSync(dest, { force: true });
  }
}

async function copyInto(source: string, dest: string): Promise<{ pages: number; schemaVersion: number }> {
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
