import type { OutboxPayload } from '../../core/outbox.js';
import { type Origin, outboxEntries, SWEEP_BATCH, type WindowClaim, type WindowStore } from '../contract/index.js';
import { keyLock, type PgDb } from './pg-db.js';
import type { PgDeliveries } from './pg-deliveries.js';
import { transaction } from './pool.js';

const SQL = {
  /** rowCount is 1 exactly when this call claimed the key (no live claim held it). */
  claim: `
INSERT INTO windows (tenant, key, expires_at) VALUES ($1, $2, $3)
ON CONFLICT (tenant, key) DO UPDATE SET expires_at = excluded.expires_at WHERE windows.expires_at <= $4`,
  sweep: `DELETE FROM windows WHERE (tenant, key) IN (SELECT tenant, key FROM windows WHERE expires_at <= $1 LIMIT $2)`,
};

/** Windowed claims in Postgres. */
export class PgWindows implements WindowStore {
  constructor(
    private readonly x: PgDb,
    private readonly deliveries: PgDeliveries,
  ) {}

  /** One INSERT … ON CONFLICT … WHERE claims; a repeat's re-queue is in the same transaction. */
  claim(tenant: string, key: string, ttlMs: number, outbox?: OutboxPayload, origin?: Origin) {
    return transaction(this.x.pool, keyLock(tenant, key), async (c): Promise<WindowClaim> => {
      const now = this.x.clock.now();
      const r = await c.query(SQL.claim, [tenant, key, now + ttlMs, now]);
      const claim: WindowClaim =
        r.rowCount === 1 ? 'claimed' : (await this.deliveries.requeueFailing(c, { kind: 'violation', tenant, key }, now)) > 0 ? 'requeued' : 'repeat';
      if (claim === 'claimed' && outbox) await this.x.append(c, outboxEntries.violation(tenant, key, outbox, now));
      await this.x.audit(c, 'violations', { tenant, key, decision: claim === 'repeat' ? 'SUPPRESS' : 'CREATE', reason: claim }, now, origin);
      return claim;
    });
  }

  async sweep(): Promise<number> {
    return (await this.x.pool.query(SQL.sweep, [this.x.clock.now(), SWEEP_BATCH])).rowCount ?? 0;
  }
}
