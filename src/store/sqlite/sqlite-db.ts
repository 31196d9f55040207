import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import type { Clock } from '../../core/clock.js';
import { encodeRoute, type OutboxEntry } from '../../core/outbox.js';
import { Checkpointer, WAL_PAGES, type CheckpointStatus } from './checkpointer.js';
import { GroupCommit } from './group-commit.js';
import { migrate, newerSchema } from './migrate.js';
import { isWriteFault, writeFaultError } from './write-fault.js';
import { makeDirs } from '../make-dirs.js';

export type SqliteSynchronous = 'normal' | 'full';

export interface SqliteOptions {
  /**
   * `normal` (default): with WAL, survives a process crash; the last commits may be
   * lost on power loss. `full`: fsync on every commit, survives power loss too.
   */
  synchronous?: SqliteSynchronous;
  /** How long a writer waits for another process's write lock before failing. */
  busyTimeoutMs?: number;
  /** How long an expired, unclosed record is kept to detect premature expiry. */
  expiredGraceMs?: number;
  /** The checkpoint worker stopped, or its passes began to fail (see Checkpointer). */
  onCheckpointProblem?: (err: Error) => void;
}

const APPEND_OUTBOX = `
INSERT INTO outbox (tenant, kind, action, key, severity, summary, data, at, route)
VALUES (@tenant, @kind, @action, @key, @severity, @summary, @data, @at, @route)`;

/**
 * One SQLite file as the facets share it: the connection (WAL, migrated),
 * the group commit every write goes through, the clock, and the outbox
 * append every deciding facet makes inside its own transaction.
 */
export class SqliteDb {
  readonly db: Database.Database;
  readonly writes: GroupCommit;
  private readonly appendStmt;

  constructor(
    readonly path: string,
    readonly clock: Clock,
    options: SqliteOptions = {},
  ) {
    if (path !== ':memory:') makeDirs(dirname(path));
    this.db = new Database(path, { timeout: options.busyTimeoutMs ?? 5000 });
    this.db.pragma('journal_mode = WAL');
    this.db.pragma(`synchronous = ${(options.synchronous ?? 'normal').toUpperCase()}`);
    const version = this.db.pragma('user_version', { simple: true }) as number;
    const newer = newerSchema(path, version);
    if (newer) {
      this.db.close();
      throw new Error(`${newer}: run a newer onceonly on it`);
    }
    // A savepoint's journal (one per operation of a group commit) kept in
    // memory, not in a temporary file written page by page: it lives only
    // until its batch commits.
    this.db.pragma('temp_store = MEMORY');
    migrate(this.db);
    if (path !== ':memory:' && path !== '') {
      this.db.pragma(`wal_autocheckpoint = ${WAL_PAGES}`);
      // In bytes, so from the file's own page size (4 KiB unless another tool made the file).
      const pageSize = this.db.pragma('page_size', { simple: true }) as number;
      this.db.pragma(`journal_size_limit = ${WAL_PAGES * 2 * pageSize}`);
      this.checkpointer = new Checkpointer(path, WAL_PAGES * 2 * pageSize, { onProblem: options.onCheckpointProblem });
    }
    this.writes = new GroupCommit(
      this.db,
      1024,
      (error) => {
        if (!isWriteFault(error)) return error;
        this.writeFault = writeFaultError(error);
        return this.writeFault;
      },
      () => {
        this.writeFault = null;
        this.checkpointer?.afterCommit(this.db);
      },
    );
    this.appendStmt = this.db.prepare<[Omit<OutboxEntry, 'data' | 'route'> & { data: string; route: string | null }]>(APPEND_OUTBOX);
    const probe = this.db.prepare('INSERT INTO write_probe (pad) VALUES (zeroblob(16384))');
    const unprobe = this.db.prepare('DELETE FROM write_probe');
    this.probeWrite = () => {
      probe.run();
      unprobe.run();
    };
  }

  private readonly checkpointer: Checkpointer | null = null;

  /** The WAL and its checkpoints, for /metrics; null for a database in memory (no WAL). */
  checkpoints(): CheckpointStatus | null {
    return this.checkpointer?.status() ?? null;
  }

  /** Commits what is queued, then closes the checkpoint worker's connection and this one. */
  async close(): Promise<void> {
    this.writes.flush();
    await this.checkpointer?.stop();
    this.db.close();
  }

  /** Set while the file cannot be written (the last write failed so); cleared by the next commit. */
  writeFault: Error | null = null;
  private readonly probeWrite: () => void;

  /**
   * Ready when the file answers and, after a write failed for want of space
   * or access, when a probe write (16 KiB, so new pages are needed) commits.
   */
  async ping(): Promise<void> {
    this.db.prepare('SELECT 1').get();
    if (this.writeFault) await this.writes.submit(this.probeWrite);
  }

  /** Only ever called inside a write transaction (a GroupCommit batch). */
  append(entry: OutboxEntry | null): void {
    if (entry) this.appendStmt.run({ ...entry, data: JSON.stringify(entry.data), route: encodeRoute(entry.route) });
  }
}
