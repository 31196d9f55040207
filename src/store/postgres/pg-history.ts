import { bodyOf, eventOf, runOf, SWEEP_BATCH, type HistoryAppend, type HistoryKey, type HistoryLimits, type HistoryStore } from '../contract/index.js';
import * as shared from '../sql/history.js';
import { bind, forPg } from '../sql/named.js';
import type { PgDb } from './pg-db.js';

const SQL = {
  read: forPg(shared.READ_HISTORY),
  sweep: forPg(shared.SWEEP_HISTORY),
  keys: forPg(shared.HISTORY_KEYS_SINCE),
};

/** Histories in Postgres: a batch is one call of history_append (migration 018), one round trip and one transaction. */
export class PgHistory implements HistoryStore {
  constructor(private readonly x: PgDb) {}

  async append(entries: readonly HistoryAppend[], limits: HistoryLimits) {
    if (entries.length === 0) return;
    const rows = entries.map((a) => {
      const r = runOf(a);
      return {
        tenant: a.tenant,
        key: a.key,
        fold: a.fold ?? null,
        count: r.count,
        first_at: r.first_at,
        last_at: r.last_at,
        gap: r.max_gap_ms,
        body: bodyOf(a.event),
      };
    });
    await this.x.pool.query('SELECT history_append($1::jsonb, $2, $3)', [JSON.stringify(rows), limits.maxEvents, Math.ceil(limits.keepMs)]);
  }

  async read(tenant: string, key: string) {
    const rows = (await this.x.pool.query<shared.HistoryRow>(SQL.read.text, bind(SQL.read, { tenant, key, now: this.x.clock.now() }))).rows;
    return rows.map((r) => eventOf(r.body, shared.runOfRow(r)));
  }

  async keysSince(since: number, limit: number) {
    return (await this.x.pool.query<HistoryKey>(SQL.keys.text, bind(SQL.keys, { since, limit, now: this.x.clock.now() }))).rows;
  }

  async sweep(): Promise<number> {
    return (await this.x.pool.query(SQL.sweep.text, bind(SQL.sweep, { now: this.x.clock.now(), batch: SWEEP_BATCH }))).rowCount ?? 0;
  }
}
