import Database from 'better-sqlite3';
import { systemClock } from '../../src/core/clock.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { tempDir } from '../../test/helpers/tmp.js';
import { GRACE_MS, TTL_MS, type Backend } from './backend.js';

/** The store as shipped, its file open to a section that writes a table of its own in the same group commit (history's floor). */
export class BenchSqliteStore extends SqliteStore {
  get file() {
    return this.x;
  }
}

/**
 * SQLite in WAL with synchronous=NORMAL (the default store). The naive algorithm's
 * algorithm and the ceiling run on a second database file with the same
 * settings, one autocommit statement at a time, as a plain loop would.
 */
export async function sqliteBackend(): Promise<Backend & { path: string }> {
  const dir = tempDir('onceonly-bench-sqlite-');
  const path = `${dir.path}/onceonly.db`;
  const store = new BenchSqliteStore(path, systemClock, { synchronous: 'normal', expiredGraceMs: GRACE_MS });
  const db = new Database(`${dir.path}/baseline.db`);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.exec(`CREATE TABLE naive (key TEXT PRIMARY KEY, fp TEXT NOT NULL, expires_at INTEGER NOT NULL);
           CREATE TABLE ceil (key TEXT PRIMARY KEY, fp TEXT NOT NULL, last_seen_at INTEGER NOT NULL, refires INTEGER NOT NULL)`);
  const claim = db.prepare('INSERT INTO naive (key, fp, expires_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING');
  const read = db.prepare('SELECT fp FROM naive WHERE key = ?').pluck();
  const write = db.prepare('UPDATE naive SET fp = ?, expires_at = ? WHERE key = ?');
  const upsert = db.prepare(
    'INSERT INTO ceil (key, fp, last_seen_at, refires) VALUES (?, ?, ?, 0) ON CONFLICT (key) DO UPDATE SET fp = excluded.fp, last_seen_at = excluded.last_seen_at, refires = refires + 1',
  );
  return {
    name: 'sqlite',
    path,
    store,
    inflight: 256,
    async naive({ key, fp }) {
      const now = Date.now();
      if (claim.run(key, fp, now + TTL_MS).changes === 1) return 'CREATE';
      const stored = read.get(key);
      write.run(fp, now + TTL_MS, key);
      return stored === fp ? 'SUPPRESS' : 'UPDATE';
    },
    ceiling: { label: 'bare INSERT … ON CONFLICT, autocommit', run: async ({ key, fp }) => upsert.run(key, fp, Date.now()) },
    async close() {
      await store.close();
      db.close();
      dir.remove();
    },
  };
}
