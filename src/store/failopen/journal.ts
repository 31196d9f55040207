import { createHash, randomUUID } from 'node:crypto';
import type { Clock } from '../../core/clock.js';
import type { OutboxPayload } from '../../core/outbox.js';
import {
  claimShown,
  type IncidentClaim,
  type IncidentDecisionResult,
  incidentOfRow,
  type IncidentRecord,
  type IncidentRow,
  MAX_ERROR_CHARS,
  rowOfIncident,
  type Silence,
} from '../contract/index.js';
import { SqliteStore } from '../sqlite/sqlite-store.js';
import { JournalLock } from './journal-lock.js';

/** A journal entry the shared store refused to take, set aside so it blocks nothing. */
export interface QuarantinedEntry extends IncidentRecord {
  /** Short and typeable whatever the key holds: what `onceonly journal retry|drop` takes. */
  id: string;
  error: string;
  quarantinedAt: number;
}

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
CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS quarantine (
  tenant TEXT NOT NULL, key TEXT NOT NULL, fingerprint TEXT NOT NULL,
  created_at INTEGER NOT NULL, last_seen_at INTEGER NOT NULL,
  refires INTEGER NOT NULL, updates INTEGER NOT NULL, expires_at INTEGER NOT NULL,
  error TEXT NOT NULL, quarantined_at INTEGER NOT NULL, id TEXT NOT NULL UNIQUE,
  PRIMARY KEY (tenant, key, created_at)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS answered (
  tenant TEXT NOT NULL, key TEXT NOT NULL, fingerprint TEXT NOT NULL, expires_at INTEGER NOT NULL,
  claim TEXT NOT NULL, restored_at INTEGER,
  PRIMARY KEY (tenant, key)
) WITHOUT ROWID;`;

const COLUMNS = `tenant, key, fingerprint, created_at AS createdAt, last_seen_at AS lastSeenAt,
  refires, updates, expires_at AS expiresAt, route, identity, latest`;

/**
 * The columns an entry gained after the journal's tables were first made (a
 * key's route, its identity and latest arrival): added to a journal that
 * lacks them, since SQLite has no ADD COLUMN IF NOT EXISTS.
 */
function addLaterColumns(db: SqliteStore['x']['db']): void {
  for (const table of ['reconciling', 'quarantine']) {
    const have = new Set((db.prepare(`PRAGMA table_info(${table})`).all() as Array<{ name: string }>).map((c) => c.name));
    for (const column of ['route', 'identity', 'latest']) if (!have.has(column)) db.exec(`ALTER TABLE ${table} ADD COLUMN ${column} TEXT`);
  }
}

export interface JournalOptions {
  /**
   * Take the journal for this process alone (a serving replica does; the
   * operator's `onceonly journal` commands do not). A second owner refuses to
   * open, naming the path.
   */
  own?: boolean;
}

export class Journal extends SqliteStore {
  private readonly j;
  private readonly lock: JournalLock | null;
  /** Random, made once per journal file: entries of two journals never share a replay id. */
  readonly instanceId: string;

  constructor(path: string, clock: Clock, options: JournalOptions = {}) {
    // Owned before anything is read, so two replicas never replay one journal.
    const lock = options.own ? new JournalLock(path) : null;
    try {
      // A journal must survive the crash that follows an outage more often than usual.
      super(path, clock, { synchronous: 'full' });
    } catch (err) {
      lock?.release();
      throw err;
    }
    this.lock = lock;
    const db = this.x.db;
    db.exec(JOURNAL_SCHEMA);
    addLaterColumns(db);
    db.prepare(`INSERT OR IGNORE INTO meta (name, value) VALUES ('instance', ?)`).run(randomUUID());
    this.instanceId = (db.prepare(`SELECT value FROM meta WHERE name = 'instance'`).get() as { value: string }).value;
    this.j = {
      pick: db.prepare<[number], IncidentRow>(`SELECT ${COLUMNS} FROM incidents LIMIT ?`),
      park: db.prepare(
        `INSERT OR REPLACE INTO reconciling (tenant, key, fingerprint, created_at, last_seen_at, refires, updates, expires_at, route, identity, latest)
         VALUES (@tenant, @key, @fingerprint, @createdAt, @lastSeenAt, @refires, @updates, @expiresAt, @route, @identity, @latest)`,
      ),
      unjournal: db.prepare<[string, string]>(`DELETE FROM incidents WHERE tenant = ? AND key = ?`),
      parked: db.prepare<[], IncidentRow>(`SELECT ${COLUMNS} FROM reconciling`),
      forget: db.prepare<[string, string, number]>(`DELETE FROM reconciling WHERE tenant = ? AND key = ? AND created_at = ?`),
      counts: db.prepare<[], { n: number }>(`SELECT (SELECT count(*) FROM incidents) + (SELECT count(*) FROM reconciling) AS n`),
      quarantine: db.prepare(
        `INSERT OR REPLACE INTO quarantine (tenant, key, fingerprint, created_at, last_seen_at, refires, updates, expires_at, error, quarantined_at, id, route, identity, latest)
         VALUES (@tenant, @key, @fingerprint, @createdAt, @lastSeenAt, @refires, @updates, @expiresAt, @error, @quarantinedAt, @id, @route, @identity, @latest)`,
      ),
      quarantined: db.prepare<[number], QuarantinedRow>(
        `SELECT ${COLUMNS}, error, quarantined_at AS quarantinedAt, id FROM quarantine ORDER BY quarantined_at, created_at LIMIT ?`,
      ),
      quarantinedOne: db.prepare<[string], QuarantinedRow>(`SELECT ${COLUMNS}, error, quarantined_at AS quarantinedAt, id FROM quarantine WHERE id = ?`),
      release: db.prepare<[string, string, number]>(`DELETE FROM quarantine WHERE tenant = ? AND key = ? AND created_at = ?`),
      quarantineCount: db.prepare<[], { n: number }>(`SELECT count(*) AS n FROM quarantine`),
      live: db.prepare<[string, string], { n: number }>(`SELECT count(*) AS n FROM incidents WHERE tenant = ? AND key = ?`),
      answered: db.prepare<[string, string, number], { fingerprint: string; expiresAt: number; claim: string }>(
        `SELECT fingerprint, expires_at AS expiresAt, claim FROM answered WHERE tenant = ? AND key = ? AND expires_at > ?`,
      ),
      restore: db.prepare<[IncidentRow]>(
        `INSERT INTO incidents (tenant, key, fingerprint, created_at, last_seen_at, refires, updates, expires_at, route, identity, latest)
         VALUES (@tenant, @key, @fingerprint, @createdAt, @lastSeenAt, @refires, @updates, @expiresAt, @route, @identity, @latest)`,
      ),
      markRestored: db.prepare<[number, string, string]>(`UPDATE answered SET restored_at = ? WHERE tenant = ? AND key = ?`),
      note: db.prepare<[string, string, string, number, string]>(
        `INSERT INTO answered (tenant, key, fingerprint, expires_at, claim) VALUES (?, ?, ?, ?, ?)
         ON CONFLICT (tenant, key) DO UPDATE SET fingerprint = excluded.fingerprint, expires_at = excluded.expires_at, claim = excluded.claim`,
      ),
      restoredClaim: db.prepare<[string, string, number], { claim: string }>(`SELECT claim FROM answered WHERE tenant = ? AND key = ? AND restored_at = ?`),
      forgetAnswered: db.prepare(`DELETE FROM answered`),
      owed: db.prepare<[string, string, string, string], { action: string }>(
        `SELECT action FROM outbox WHERE kind = 'incident' AND tenant = ? AND key = ?
         UNION ALL SELECT action FROM deliveries WHERE kind = 'incident' AND tenant = ? AND key = ? AND status = 'pending'`,
      ),
      dropOwedOutbox: db.prepare<[string, string]>(`DELETE FROM outbox WHERE kind = 'incident' AND tenant = ? AND key = ?`),
      dropOwedDeliveries: db.prepare<[string, string]>(`DELETE FROM deliveries WHERE kind = 'incident' AND tenant = ? AND key = ? AND status = 'pending'`),
      latestClaim: db.prepare<[string, string, string], { claim: string }>(`SELECT claim FROM answered WHERE tenant = ? AND key = ? AND fingerprint = ?`),
      keepSilences: db.prepare<[string]>(`INSERT OR REPLACE INTO meta (name, value) VALUES ('silences', ?)`),
      keptSilences: db.prepare<[], { value: string }>(`SELECT value FROM meta WHERE name = 'silences'`),
    };
  }

  /** Sets a parked entry aside with the reason the shared store gave, in one transaction. */
  quarantine(rec: IncidentRecord, error: string): Promise<void> {
    return this.x.writes.submit(() => {
      this.j.quarantine.run({ ...rowOf(rec), error: error.slice(0, MAX_ERROR_CHARS), quarantinedAt: this.x.clock.now(), id: quarantineId(rec) });
      this.j.forget.run(rec.tenant, rec.key, rec.createdAt);
    });
  }

  /**
   * The journal's memory of an outage: every key it answered, kept after its
   * entry was replayed until the store has been healthy for a settle period.
   * A store that flaps (answers, then not, then again) makes several degraded
   * episodes of one outage; without this, each episode would answer the same
   * fault CREATE again, and each CREATE would be a ticket.
   */
  private noteIn(claim: IncidentClaim, rec: IncidentRecord): void {
    // The record's route goes with the claim, so a key restored later keeps where its create went.
    this.j.note.run(claim.tenant, claim.key, rec.fingerprint, rec.expiresAt, JSON.stringify({ ...claim, route: rec.route }));
  }

  /**
   * A provisional decision, in one journal write: the key restored from the
   * outage's memory if it was answered and replayed since (restoreIn),
   * the decision, and the memory of it (noteIn). As three writes, a
   * replay pass that took the key's entry between the first and the second
   * left the decision finding no record: a second provisional CREATE from
   * one replica in one outage.
   */
  decideRemembering(claim: IncidentClaim): Promise<IncidentDecisionResult> {
    return this.x.writes.submit(() => {
      this.restoreIn(claim.tenant, claim.key);
      const result = this.incidents.decideIn(claim);
      this.noteIn(claim, result.record);
      return result;
    });
  }

  /**
   * A key answered earlier in this outage and already replayed is put back as
   * a live journal record, so the arrival now is a repeat (SUPPRESS, or UPDATE
   * on a change) instead of a second CREATE. Its refires start one below zero:
   * the arrival that finds it is the one counted. Its replay is then a merge;
   * if the shared store no longer holds the key live, the replay's claim
   * writes a create in the shared store (see restoredClaim), so a fault
   * closed meanwhile is never lost.
   */
  private restoreIn(tenant: string, key: string): void {
    if ((this.j.live.get(tenant, key)?.n ?? 0) > 0) return;
    const now = this.x.clock.now();
    const a = this.j.answered.get(tenant, key, now);
    if (!a) return;
    const { route, shown } = JSON.parse(a.claim) as IncidentClaim & { route?: string[] };
    const kept = { tenant, key, fingerprint: a.fingerprint, createdAt: now, lastSeenAt: now, refires: -1, updates: 0, expiresAt: a.expiresAt };
    this.j.restore.run(rowOfIncident({ ...kept, ...(route ? { route } : {}), ...claimShown({ shown }) }));
    this.j.markRestored.run(now, tenant, key);
  }

  /** The claim a restored entry answered from memory (a repeat, with no create of its own); null for any other entry. */
  restoredClaim(rec: IncidentRecord): IncidentClaim | null {
    const row = this.j.restoredClaim.get(rec.tenant, rec.key, rec.createdAt);
    if (!row) return null;
    const { route: _kept, ...claim } = JSON.parse(row.claim) as IncidentClaim & { route?: string[] };
    return claim;
  }

  /**
   * The outbox entry of the latest arrival the journal answered for this
   * entry's key, when that arrival is what the entry holds (its fingerprint):
   * what a replay that finds the key changed meanwhile delivers as its UPDATE.
   */
  latestOutbox(rec: IncidentRecord): OutboxPayload | undefined {
    const row = this.j.latestClaim.get(rec.tenant, rec.key, rec.fingerprint);
    return row ? (JSON.parse(row.claim) as IncidentClaim).outbox : undefined;
  }

  /**
   * What this journal still owes the receivers for an entry's key (its
   * provisional decisions not yet delivered): 'create' if a create is among
   * them, else 'update' if anything is, else null. A replay hands that debt
   * to the shared store, whose line for the key then carries it in order
   * with everything the store decided (see dropOwed).
   */
  owed(rec: IncidentRecord): 'create' | 'update' | null {
    const actions = this.j.owed.all(rec.tenant, rec.key, rec.tenant, rec.key).map((r) => r.action);
    return actions.includes('create') ? 'create' : actions.length > 0 ? 'update' : null;
  }

  /**
   * Drops the entry's key's undelivered provisional deliveries once the
   * shared store holds their debt: delivered from here, they could reach a
   * receiver after the store's newer state of the key (a retry behind a
   * 429 outlasts the outage). A call in flight still ends as it ends.
   */
  dropOwed(rec: IncidentRecord): Promise<void> {
    return this.x.writes.submit(() => {
      this.j.dropOwedOutbox.run(rec.tenant, rec.key);
      this.j.dropOwedDeliveries.run(rec.tenant, rec.key);
    });
  }

  /** The outage is over: the journal forgets which keys it answered. */
  forgetAnswered(): Promise<void> {
    return this.x.writes.submit(() => {
      this.j.forgetAnswered.run();
    });
  }

  /** Quarantined entries, oldest first. */
  quarantined(limit = 1000): QuarantinedEntry[] {
    return this.j.quarantined.all(limit).map(quarantinedOf);
  }

  quarantinedCount(): number {
    return this.j.quarantineCount.get()?.n ?? 0;
  }

  /**
   * Puts quarantined entries back to be replayed (first, at the next replay
   * pass), or drops them for good. Answers the ids that were found.
   */
  releaseQuarantined(ids: readonly string[], how: 'retry' | 'drop'): Promise<string[]> {
    return this.x.writes.submit(() => {
      const found: string[] = [];
      for (const id of ids) {
        const row = this.j.quarantinedOne.get(id);
        if (!row) continue;
        const e = quarantinedOf(row);
        if (how === 'retry') this.j.park.run(rowOf(e));
        this.j.release.run(e.tenant, e.key, e.createdAt);
        found.push(e.id);
      }
      return found;
    });
  }

  /** Moves up to `limit` journal entries to `reconciling`, in one transaction. */
  takeBatch(limit: number): Promise<IncidentRecord[]> {
    return this.x.writes.submit(() => {
      const rows = this.j.pick.all(limit);
      for (const r of rows) {
        this.j.park.run(r);
        this.j.unjournal.run(r.tenant, r.key);
      }
      return rows.map(incidentOfRow);
    });
  }

  /** Entries taken for a replay that has not finished (after a crash, too). */
  parked(): IncidentRecord[] {
    return this.j.parked.all().map(incidentOfRow);
  }

  /** The replay of this entry reached the shared store. */
  forget(rec: IncidentRecord): Promise<void> {
    return this.x.writes.submit(() => {
      this.j.forget.run(rec.tenant, rec.key, rec.createdAt);
    });
  }

  /**
   * The silences this replica last loaded from the shared store, kept so that
   * a replica restarted while that store is unreachable mutes with them
   * instead of with none (it would otherwise page for every silenced key it
   * decides provisionally).
   */
  keepSilences(all: readonly Silence[]): Promise<void> {
    return this.x.writes.submit(() => {
      this.j.keepSilences.run(JSON.stringify(all));
    });
  }

  /** What keepSilences kept last, or null when it never ran on this journal. */
  keptSilences(): Silence[] | null {
    const row = this.j.keptSilences.get();
    return row ? (JSON.parse(row.value) as Silence[]) : null;
  }

  /** Entries not yet replayed (journaled and parked). Synchronous, so a mode switch can trust it. */
  size(): number {
    return this.j.counts.get()?.n ?? 0;
  }

  override async close(): Promise<void> {
    try {
      await super.close();
    } finally {
      this.lock?.release();
    }
  }

  /**
   * Stable per entry across restarts, so a repeated replay is recognised, and
   * unique across journals and keys (the marker key adds tenant and key).
   */
  entryId(rec: IncidentRecord): string {
    return `${this.instanceId}:${rec.createdAt}`;
  }
}

/** A record as the journal's tables hold it: its own columns only (a quarantined entry's others dropped), the rest encoded. */
const rowOf = (r: IncidentRecord): IncidentRow =>
  rowOfIncident({
    tenant: r.tenant,
    key: r.key,
    fingerprint: r.fingerprint,
    createdAt: r.createdAt,
    lastSeenAt: r.lastSeenAt,
    refires: r.refires,
    updates: r.updates,
    expiresAt: r.expiresAt,
    ...(r.route ? { route: r.route } : {}),
    ...(r.identity ? { identity: r.identity } : {}),
    ...(r.latest ? { latest: r.latest } : {}),
  });

type QuarantinedRow = IncidentRow & Omit<QuarantinedEntry, keyof IncidentRecord>;
const quarantinedOf = ({ error, quarantinedAt, id, ...row }: QuarantinedRow): QuarantinedEntry => ({ ...incidentOfRow(row), error, quarantinedAt, id });

/** `q-` and 16 hex of a hash of the entry's identity: stable, and safe to type whatever the key holds. */
const quarantineId = (e: IncidentRecord) => `q-${createHash('sha256').update(`${e.tenant}\u0000${e.key}\u0000${e.createdAt}`).digest('hex').slice(0, 16)}`;
