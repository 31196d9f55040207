import {
  type AppendResult,
  bodyBytes,
  bodyOf,
  eventOf,
  runOf,
  type HistoryAppend,
  type HistoryKey,
  type HistoryLimits,
  type HistoryStore,
} from '../contract/index.js';
import * as shared from '../sql/history.js';
import type { SqliteDb } from './sqlite-db.js';

/** A key's newest row, where its next event may fold. */
interface Tail {
  id: number;
  fold: string | null;
  seq: number;
}

/** Histories in the SQLite file: a batch is one GroupCommit transaction (each key's fold or insert, and its trim). */
export class SqliteHistory implements HistoryStore {
  private readonly s;

  constructor(private readonly x: SqliteDb) {
    const db = x.db;
    this.s = {
      // Positional parameters: binding named ones costs a lookup per parameter, and these run once per event.
      last: db.prepare<[string, string], Tail>('SELECT id, fold, seq FROM history WHERE tenant = ? AND key = ? ORDER BY id DESC LIMIT 1'),
      // in: count, gap, first, last, expires, id
      fold: db.prepare<[number, number, number, number, number, number]>(
        'UPDATE history SET count = count + ?, gap = MAX(gap, ?, ? - last_at), last_at = ?, expires_at = ? WHERE id = ?',
      ),
      insert: db.prepare<[string, string, number, number, string | null, number, number, number, string, number]>(
        'INSERT INTO history (tenant, key, at, last_at, fold, count, gap, seq, body, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
      ),
      // Beyond the newest `max` (run only once a key holds more); what they held goes back to the tenant.
      trim: db.prepare<[string, string, number], { b: number }>(
        'DELETE FROM history WHERE tenant = ? AND key = ? AND seq <= ? RETURNING length(CAST(body AS BLOB)) AS b',
      ),
      held: db.prepare<[string], { bytes: number }>('SELECT bytes FROM history_bytes WHERE tenant = ?'),
      hold: db.prepare<[{ tenant: string; change: number }]>(
        'INSERT INTO history_bytes (tenant, bytes) VALUES (@tenant, MAX(0, @change)) ON CONFLICT (tenant) DO UPDATE SET bytes = MAX(0, bytes + @change)',
      ),
      sweepReturning: db.prepare<[Record<string, unknown>], { tenant: string; b: number }>(
        `${shared.SWEEP_HISTORY} RETURNING tenant, length(CAST(body AS BLOB)) AS b`,
      ),
      read: db.prepare<[Record<string, unknown>], shared.HistoryRow>(shared.READ_HISTORY),
      keys: db.prepare<[Record<string, unknown>], HistoryKey>(shared.HISTORY_KEYS_SINCE),
    };
  }

  append(entries: readonly HistoryAppend[], limits: HistoryLimits) {
    return this.x.writes.submit((): AppendResult => {
      // Each key's last row as this batch left it: a key's second event in a batch reads nothing.
      const tails = new Map<string, Tail | null>();
      // Each tenant's bytes: as held when the batch first met it, and what the batch changed.
      const held = new Map<string, { was: number; change: number }>();
      const heldBy = (tenant: string) => {
        let h = held.get(tenant);
        if (!h) held.set(tenant, (h = { was: this.s.held.get(tenant)?.bytes ?? 0, change: 0 }));
        return h;
      };
      let overTenantBytes = 0;
      for (const a of entries) {
        const r = runOf(a);
        const { tenant, key } = a;
        const expires = r.last_at + limits.keepMs;
        const id = `${tenant}\u0000${key}`;
        let last = tails.get(id);
        // Measured against one INSERT … SELECT … RETURNING doing the read itself: these two are faster.
        if (last === undefined) last = this.s.last.get(tenant, key) ?? null;
        if (last && a.fold !== undefined && last.fold === a.fold) {
          this.s.fold.run(r.count, r.max_gap_ms, r.first_at, r.last_at, expires, last.id);
          continue;
        }
        const body = bodyOf(a.event);
        const bytes = bodyBytes(body);
        const h = heldBy(tenant);
        if (limits.maxTenantBytes !== undefined && h.was + h.change + bytes > limits.maxTenantBytes) {
          overTenantBytes++;
          continue;
        }
        h.change += bytes;
        const seq = (last?.seq ?? 0) + 1;
        const fold = a.fold ?? null;
        const row = Number(this.s.insert.run(tenant, key, r.first_at, r.last_at, fold, r.count, r.max_gap_ms, seq, body, expires).lastInsertRowid);
        tails.set(id, { id: row, fold, seq });
        // Past the bound the oldest go now. Rows past their time are not read (the read asks for expires_at > now) and
        // go with the sweep: a DELETE per append to drop them sooner ran for one event in three and removed nothing a read shows.
        if (seq > limits.maxEvents) for (const gone of this.s.trim.all(tenant, key, seq - limits.maxEvents)) h.change -= gone.b;
      }
      for (const [tenant, h] of held) if (h.change !== 0) this.s.hold.run({ tenant, change: h.change });
      return { overTenantBytes };
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
    const gone = this.s.sweepReturning.all({ now: this.x.clock.now(), batch });
    const freed = new Map<string, number>();
    for (const g of gone) freed.set(g.tenant, (freed.get(g.tenant) ?? 0) + g.b);
    for (const [tenant, bytes] of freed) this.s.hold.run({ tenant, change: -bytes });
    return gone.length;
  }
}
