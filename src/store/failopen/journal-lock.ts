import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { makeDirs } from '../make-dirs.js';

/** A second replica opening a journal that another process owns. */
export class JournalInUseError extends Error {
  readonly code = 'journal_in_use';
  constructor(readonly path: string) {
    super(
      `the fail-open journal ${JSON.stringify(path)} belongs to another running process; ` +
        'give each replica its own failopen.journal_path (e.g. one per replica name or port)',
    );
    this.name = 'JournalInUseError';
  }
}

/**
 * One process per journal: two replicas replaying one journal would each
 * claim its entries, and one replica's unreplayable entry would degrade the
 * other. The lock is an exclusive SQLite lock on `<journal>.lock`, held by an
 * open connection in EXCLUSIVE locking mode: the operating system releases it
 * when the process ends, however it ends, so a crash never leaves a stale lock
 * to clear by hand (as a PID file would).
 */
export class JournalLock {
  private readonly db: Database.Database;

  constructor(journalPath: string) {
    const path = `${journalPath}.lock`;
    makeDirs(dirname(path));
    // No busy wait: an owned lock is not going to be released soon.
    const db = new Database(path, { timeout: 0 });
    try {
      db.pragma('locking_mode = EXCLUSIVE');
      // The first write takes the exclusive lock; EXCLUSIVE mode keeps it until close.
      db.exec('CREATE TABLE IF NOT EXISTS owner (pid INTEGER NOT NULL)');
      db.prepare('DELETE FROM owner').run();
      db.prepare('INSERT INTO owner (pid) VALUES (?)').run(process.pid);
    } catch (err) {
      db.close();
      if ((err as { code?: string }).code?.startsWith('SQLITE_BUSY') || (err as { code?: string }).code === 'SQLITE_LOCKED') {
        throw new JournalInUseError(journalPath);
      }
      throw err;
    }
    this.db = db;
  }

  release(): void {
    if (this.db.open) this.db.close();
  }
}
