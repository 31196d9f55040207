import { encodeRoute, type OutboxPayload } from '../../core/outbox.js';
import { type Origin, SWEEP_BATCH, type WindowClaim, type WindowStore } from '../contract/index.js';
import { keyLock, type PgDb } from './pg-db.js';

const SQL = {
  claim: `SELECT oo_claim_window($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) AS claim`,
  sweep: `DELETE FROM windows WHERE (tenant, key) IN (SELECT tenant, key FROM windows WHERE expires_at <= $1 LIMIT $2)`,
};

/** Windowed claims in Postgres. */
export class PgWindows implements WindowStore {
  constructor(private readonly x: PgDb) {}

  /** One round trip: oo_claim_window (migration 006) claims, or re-queues a repeat's failing deliveries, under the key's lock. */
  async claim(tenant: string, key: string, ttlMs: number, outbox?: OutboxPayload, origin?: Origin): Promise<WindowClaim> {
    const data = outbox ? JSON.stringify(outbox.data) : null;
    const { rows } = await this.x.pool.query<{ claim: WindowClaim }>(SQL.claim, [
      keyLock(tenant, key),
      tenant,
      key,
      ttlMs,
      this.x.clock.now(),
      outbox?.severity ?? null,
      outbox?.summary ?? null,
      data,
      ...this.x.auditArgs('violations', origin),
      encodeRoute(outbox?.route),
    ]);
    return rows[0]!.claim;
  }

  async sweep(): Promise<number> {
    return (await this.x.pool.query(SQL.sweep, [this.x.clock.now(), SWEEP_BATCH])).rowCount ?? 0;
  }
}
