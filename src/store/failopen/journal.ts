import { randomUUID } from 'node:crypto';
import type { Clock } from '../../core/clock.js';
import type { IncidentRecord } from '../contract/index.js';
import { SqliteStore } from '../sqlite/sqlite-store.js';

/**
 * The fail-open journal: a local SQLite store that decides while the shared
 * store is unreachable, plus a `reconciling` table. A replay first MOVES a
 * batch of entries there in one transaction, so an arrival during the replay
 * starts a new journal entry instead of being lost in the one being replayed,
 * and a replay that crashed half-way finds its entries again at restart.
 */
const JOURNAL_SCHEMA = `
CREATE TABLE IF NOT EXISTS reconciling (
  tenant TEXT NOT NULL, key TEXT NOT NULL, fingerprint TEXT NOT NULL,
  created_at INTEGER NOT NULL, last_seen_at INTEGER NOT NULL,
  refires INTEGER NOT NULL, updates INTEGER NOT NULL, expires_at INTEGER NOT NULL,
  PRIMARY KEY (tenant, key, created_at)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;`;

const COLUMNS = `tenant, key, fingerprint, created_at AS createdAt, last_seen_at AS lastSeenAt,
  refires, updates, expires_at AS expiresAt`;

export class Journal extends SqliteStore {
  private readonly j;
  /** Random, made once per journal file: entries of two journals never share a replay id. */
  readonly instanceId: string;

  constructor(path: string, clock: Clock) {
    // A journal must survive the crash that follows an outage more often than usual.
    super(path, clock, { synchronous: 'full' });
    const db = this.x.db;
    db.exec(JOURNAL_SCHEMA);
    db.prepare(`INSERT OR IGNORE INTO meta (name, value) VALUES ('instance', ?)`).run(randomUUID());
    this.instanceId = (db.prepare(`SELECT value FROM meta WHERE name = 'instance'`).get() as { value: string }).value;
    this.j = {
      pick: db.prepare<[number], IncidentRecord>(`SELECT ${COLUMNS} FROM incidents LIMIT ?`),
      park: db.prepare(`INSERT OR REPLACE INTO reconciling VALUES (@tenant, @key, @fingerprint, @createdAt, @lastSeenAt, @refires, @updates, @expiresAt)`),
      unjournal: db.prepare<[string, string]>(`DELETE FROM incidents WHERE tenant = ? AND key = ?`),
      parked: db.prepare<[], IncidentRecord>(`SELECT ${COLUMNS} FROM reconciling`),
      forget: db.prepare<[string, string, number]>(`DELETE FROM reconciling WHERE tenant = ? AND key = ? AND created_at = ?`),
      counts: db.prepare<[], { n: number }>(`SELECT (SELECT count(*) FROM incidents) + (SELECT count(*) FROM reconciling) AS n`),
    };
  }

  /** Moves up to `limit` journal entries to `reconciling`, in one transaction. */
  takeBatch(limit: number): Promise<IncidentRecord[]> {
    return this.x.writes.submit(() => {
      const rows = this.j.pick.all(limit);
      for (const r of rows) {
        this.j.park.run(r);
        this.j.unjournal.run(r.tenant, r.key);
      }
      return rows;
    });
  }

  /** Entries taken for a replay that has not finished (after a crash, too). */
  parked(): IncidentRecord[] {
    return this.j.parked.all();
  }

  /** The replay of this entry reached the shared store. */
  forget(rec: IncidentRecord): Promise<void> {
    return this.x.writes.submit(() => {
      this.j.forget.run(rec.tenant, rec.key, rec.createdAt);
    });
  }

  /** Entries not yet replayed (journaled and parked). Synchronous, so a mode switch can trust it. */
  size(): number {
    return this.j.counts.get()?.n ?? 0;
  }

  /**
   * Stable per entry across restarts, so a repeated replay is recognised, and
   * unique across journals and keys (the marker key adds tenant and key).
   */
  entryId(rec: IncidentRecord): string {
    return `${this.instanceId}:${rec.createdAt}`;
  }
}
