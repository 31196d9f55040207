import type pg from 'pg';
import type { Clock } from '../../core/clock.js';
import type { OutboxEntry } from '../../core/outbox.js';
import type { AuditRow, Ledger, LedgerInputs, Origin } from '../contract/index.js';
import type { Queryable } from './pool.js';

const SQL = {
  appendOutbox: `INSERT INTO outbox (tenant, kind, action, key, severity, summary, data, at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
  audit: `INSERT INTO audit (at, tenant, kind, key, decision, reason, replica, request_id) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
  auditTrail: `SELECT at, kind, key, decision, reason, replica, request_id AS "requestId" FROM audit WHERE tenant = $1 AND key = $2 ORDER BY id LIMIT $3`,
};

/** Operations on one key (or device) take this advisory lock inside their transaction. */
export const keyLock = (tenant: string, key: string) => `${tenant.length}:${tenant}${key}`;

/**
 * One Postgres database as the facets share it: the pool, the clock, the
 * outbox append every deciding facet makes inside its own transaction, and
 * ledger mode's audit rows, written in the same transaction too.
 */
export class PgDb {
  constructor(
    readonly pool: pg.Pool,
    readonly clock: Clock,
    readonly ledger: Ledger | null,
  ) {}

  async append(c: Queryable, e: OutboxEntry | null): Promise<void> {
    if (!e) return;
    await c.query(SQL.appendOutbox, [e.tenant, e.kind, e.action, e.key, e.severity, e.summary, JSON.stringify(e.data), e.at]);
  }

  /** In ledger mode, one audit row, in the caller's transaction. */
  async audit(c: Queryable, input: keyof LedgerInputs, row: { tenant: string; key: string; decision: string; reason: string }, now: number, origin?: Origin) {
    if (!this.ledger?.inputs()[input]) return;
    await c.query(SQL.audit, [now, row.tenant, input, row.key, row.decision, row.reason, this.ledger.replica, origin?.requestId ?? 'none']);
  }

  /** The audit trail of one key, oldest first. */
  async auditTrail(tenant: string, key: string, limit: number): Promise<AuditRow[]> {
    return (await this.pool.query<AuditRow>(SQL.auditTrail, [tenant, key, limit])).rows;
  }
}
