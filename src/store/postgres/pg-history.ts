import {
  type AppendResult,
  bodyOf,
  eventOf,
  runOf,
  SWEEP_BATCH,
  type HistoryAppend,
  type HistoryKey,
  type HistoryLimits,
  type HistoryStore,
} from '../contract/index.js';
import * as shared from '../sql/history.js';
import { bind, forPg } from '../sql/named.js';
import type { PgDb } from './pg-db.js';
import { eventsOfAudit, type AuditRecord } from './audit-events.js';

/**
 * The audit rows a read looks at, the newest before the history's oldest
 * event: a key decided every minute for a year has half a million, and a
 * read stays one bounded index scan. `onceonly audit` reads all of them.
 */
export const AUDIT_ROWS_READ = 5_000;

const SQL = {
  audit: `SELECT at, kind, decision, reason, replica, request_id FROM audit
    WHERE tenant = $1 AND key = $2 AND at < $3 ORDER BY id DESC LIMIT $4`,
  read: forPg(shared.READ_HISTORY),
  keys: forPg(shared.HISTORY_KEYS_SINCE),
};

/** Histories in Postgres: a batch is one call of history_append (migration 018), one round trip and one transaction. */
export class PgHistory implements HistoryStore {
  constructor(private readonly x: PgDb) {}

  async append(entries: readonly HistoryAppend[], limits: HistoryLimits): Promise<AppendResult> {
    if (entries.length === 0) return { overTenantBytes: 0 };
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
    const { rows: answer } = await this.x.pool.query<{ over: number }>('SELECT history_append($1::jsonb, $2, $3, $4) AS over', [
      JSON.stringify(rows),
      limits.maxEvents,
      Math.ceil(limits.keepMs),
      limits.maxTenantBytes ?? null,
    ]);
    return { overTenantBytes: answer[0]?.over ?? 0 };
  }

  /**
   * A key's events: those the history keeps and, before its oldest, the
   * decisions ledger mode's audit trail kept for ever (the audit is one of
   * the history's sources, so a ledger key's past outlives the history's
   * bound and retention).
   */
  async read(tenant: string, key: string) {
    const now = this.x.clock.now();
    const rows = (await this.x.pool.query<shared.HistoryRow>(SQL.read.text, bind(SQL.read, { tenant, key, now }))).rows;
    const kept = rows.map((r) => eventOf(r.body, shared.runOfRow(r)));
    const before = kept[0]?.at ?? now + 1;
    const audit = (await this.x.pool.query<AuditRecord>(SQL.audit, [tenant, key, before, AUDIT_ROWS_READ])).rows;
    return audit.length === 0 ? kept : [...eventsOfAudit(audit.reverse()), ...kept];
  }

  async keysSince(since: number, limit: number) {
    return (await this.x.pool.query<HistoryKey>(SQL.keys.text, bind(SQL.keys, { since, limit, now: this.x.clock.now() }))).rows;
  }

  /** Events past their time, and the bytes they held given back to their tenants, in one call (history_sweep, migration 026). */
  async sweep(): Promise<number> {
    return (await this.x.pool.query<{ n: number }>('SELECT history_sweep($1, $2) AS n', [this.x.clock.now(), SWEEP_BATCH])).rows[0]?.n ?? 0;
  }
}
