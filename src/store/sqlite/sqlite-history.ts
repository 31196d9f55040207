import { bodyOf, eventOf, runOf, type HistoryAppend, type HistoryLimits, type HistoryStore } from '../contract/index.js';
import * as shared from '../sql/history.js';
import type { SqliteDb } from './sqlite-db.js';

/** Histories in the SQLite file: a batch is one GroupCommit transaction (each key's fold or insert, and its trim). */
export class SqliteHistory implements HistoryStore {
  private readonly s;

  constructor(private readonly x: SqliteDb) {
    const db = x.db;
    this.s = {
      last: db.prepare<[Record<string, unknown>], { id: number; fold: string | null }>(
        'SELECT id, fold FROM history WHERE tenant = @tenant AND key = @key ORDER BY id DESC LIMIT 1',
      ),
      fold: db.prepare(
        'UPDATE history SET count = count + @count, gap = MAX(gap, @gap, @first - last_at), last_at = @last, expires_at = @expires WHERE id = @id',
      ),
      insert: db.prepare(
        `INSERT INTO history (tenant, key, at, last_at, fold, count, gap, body, expires_at)
         VALUES (@tenant, @key, @first, @last, @fold, @count, @gap, @body, @expires)`,
      ),
      // Beyond the newest `max`, or past their time as of this append.
      trim: db.prepare(
        `DELETE FROM history WHERE tenant = @tenant AND key = @key AND (expires_at <= @last OR id <= (
           SELECT id FROM history WHERE tenant = @tenant AND key = @key ORDER BY id DESC LIMIT 1 OFFSET @max))`,
      ),
      read: db.prepare<[Record<string, unknown>], shared.HistoryRow>(shared.READ_HISTORY),
      sweep: db.prepare(shared.SWEEP_HISTORY),
    };
  }

  append(entries: readonly HistoryAppend[], limits: HistoryLimits) {
    return this.x.writes.submit(() => {
      for (const a of entries) {
        const r = runOf(a);
        const at = { tenant: a.tenant, key: a.key };
        const v = { count: r.count, gap: r.max_gap_ms, first: r.first_at, last: r.last_at, expires: r.last_at + limits.keepMs };
        const last = a.fold === undefined ? undefined : this.s.last.get(at);
        if (last && last.fold === a.fold) {
          this.s.fold.run({ id: last.id, ...v });
        } else {
          this.s.insert.run({ ...at, ...v, fold: a.fold ?? null, body: bodyOf(a.event) });
          this.s.trim.run({ ...at, max: limits.maxEvents, last: r.last_at });
        }
      }
    });
  }

  async read(tenant: string, key: string) {
    return this.s.read.all({ tenant, key, now: this.x.clock.now() }).map((r) => eventOf(r.body, shared.runOfRow(r)));
  }

  /** Inside a sweep's transaction. */
  sweep(batch: number): number {
    return this.s.sweep.run({ now: this.x.clock.now(), batch }).changes;
  }
}
