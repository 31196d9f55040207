import type pg from 'pg';
import type { Clock } from '../../core/clock.js';
import type { AuditRow, Ledger, LedgerInputs, Origin } from '../contract/index.js';

const SQL = {
  auditTrail: `SELECT at, kind, key, decision, reason, replica, request_id AS "requestId" FROM audit WHERE tenant = $1 AND key = $2 ORDER BY id LIMIT $3`,
};

/**
 * Operations on one key (or device) take this advisory lock inside their
 * transaction. The server-side functions receive the string, not its parts,
 * so TypeScript and SQL cannot disagree on it (string lengths differ between
 * them beyond the BMP).
 */
export const keyLock = (tenant: string, key: string) => `${tenant.length}:${tenant}${key}`;

/**
 * One Postgres database as the facets share it: the pool, the clock, and
 * ledger mode (whose audit rows each server-side function writes in its own
 * step).
 */
export class PgDb {
  constructor(
    readonly pool: pg.Pool,
    readonly clock: Clock,
    readonly ledger: Ledger | null,
  ) {}

  /**
   * The audit arguments a server-side decision takes: whether `input` is in
   * ledger mode now, which replica decides, and for which request.
   */
  auditArgs(input: keyof LedgerInputs, origin?: Origin): [boolean, string, string] {
    return [Boolean(this.ledger?.inputs()[input]), this.ledger?.replica ?? '', origin?.requestId ?? 'none'];
  }

  /** The audit trail of one key, oldest first. */
  async auditTrail(tenant: string, key: string, limit: number): Promise<AuditRow[]> {
    return (await this.pool.query<AuditRow>(SQL.auditTrail, [tenant, key, limit])).rows;
  }
}
