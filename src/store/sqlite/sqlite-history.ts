import { bodyOf, eventOf, runOf, type HistoryAppend, type HistoryKey, type HistoryLimits, type HistoryStore } from '../contract/index.js';
import * as shared from '../sql/history.js';
import type { SqliteDb } from './sqlite-db.js';

/** Histories in the SQLite file: a batch is one GroupCommit transaction (each key's fold or insert, and its trim). */
export class SqliteHistory implements HistoryStore {
  private readonly s;

  constructor(private readonly x: SqliteDb) {
    const db = x.db;
    this.s = {
      last: db.prepare<[Record<string, unknown>], { id: number; fold: string | null; seq: number }>(
        'SELECT id, fold, seq FROM history WHERE tenant = @tenant AND key = @key ORDER BY id DESC LIMIT 1',
      ),
      fold: db.prepare(
        'UPDATE history SET count = count + @count, gap = MAX(gap, @gap, @first - last_at), last_at = @last, expires_at = @expires WHERE id = @id',
      ),
      insert: db.prepare(
        `INSERT INTO history (tenant, key, at, last_at, fold, count, gap, seq, body, expires_at)
         VALUES (@tenant, @key, @first, @last, @fold, @count, @gap, @seq, @body, @expires)`,
      ),
      // Beyond the newest `max` (run only once a key holds more).
      trim: db.prepare('DELETE FROM history WHERE tenant = @tenant AND key = @key AND seq <= @cut'),
      // Among the key's oldest few, those past their time as of this append: the rest go with the sweep, and no read answers them.
      expire: db.prepare(
        `DELETE FROM history WHERE id IN (SELECT id FROM history WHERE tenant = @tenant AND key = @key ORDER BY id LIMIT 8) AND expires_at <= @last`,
      ),
      read: db.prepare<[Record<string, unknown>], shared.HistoryRow>(shared.READ_HISTORY),
      sweep: db.prepare(shared.SWEEP_HISTORY),
      keys: db.prepare<[Record<string, unknown>], HistoryKey>(shared.HISTORY_KEYS_SINCE),
    };
  }

  append(entries: readonly HistoryAppend[], limits: HistoryLimits) {
    return this.x.writes.submit(() => {
      for (const a of entries) {
        const r = runOf(a);
        const at = { tenant: a.tenant, key: a.key };
        const v = { count: r.count, gap: r.max_gap_ms, first: r.first_at, last: r.last_at, expires: r.last_at + limits.keepMs };
        // Measured against one INSERT … SELECT … RETURNING doing the read itself: these two are faster.
        const last = this.s.last.get(at);
        if (last && a.fold !== undefined && last.fold === a.fold) {
          this.s.fold.run({ id: last.id, ...v });
          continue;
        }
        const seq = (last?.seq ?? 0) + 1;
        this.s.insert.run({ ...at, ...v, seq, fold: a.fold ?? null, body: bodyOf(a.event) });
        // A key's first event has nothing older to drop.
        if (!last) continue;
        if (seq > limits.maxEvents) this.s.trim.run({ ...at, cut: seq - limits.maxEvents });
        this.s.expire.run({ ...at, last: r.last_at });
      }
    });
  }

  async read(tenant: string, key: string) {
    return this.s.read.all({ tenant, key, now: this.x.clock.now() }).map((r) => eventOf(r.body, shared.runOfRow(r)));
  }

  async keysSince(since: number, limit: number) {
    return this.s.keys.all({ since, limit, now: this.x.clock.now() });
  }

  /** Inside a sweep's transaction. */
  sweep(batch: number): number {
    return this.s.sweep.run({ now: this.x.clock.now(), batch }).changes;
  }
}
