import type { OutboxPayload } from '../../core/outbox.js';
import { outboxEntries, type WindowClaim, type WindowStore } from '../contract/index.js';
import type { SqliteDb } from './sqlite-db.js';
import type { SqliteDeliveries } from './sqlite-deliveries.js';

const SQL = {
  /**
   * in: tenant, key, expires_at, now. Claims the window key unless a live claim
   * holds it; changes() is 1 exactly when this call claimed it.
   */
  claim: `
INSERT INTO windows (tenant, key, expires_at) VALUES (?, ?, ?)
ON CONFLICT (tenant, key) DO UPDATE SET expires_at = excluded.expires_at
WHERE windows.expires_at <= ?`,
  /** in: now, batch. */
  sweep: `DELETE FROM windows WHERE (tenant, key) IN (SELECT tenant, key FROM windows WHERE expires_at <= ? LIMIT ?)`,
};

/** Windowed claims in the SQLite file. */
export class SqliteWindows implements WindowStore {
  private readonly s;

  constructor(
    private readonly x: SqliteDb,
    private readonly deliveries: SqliteDeliveries,
  ) {
    this.s = { claim: x.db.prepare<[string, string, number, number]>(SQL.claim), sweep: x.db.prepare<[number, number]>(SQL.sweep) };
  }

  /** One INSERT … ON CONFLICT … WHERE: the claim and the check are one statement; a repeat's re-queue is in the same transaction. */
  claim(tenant: string, key: string, ttlMs: number, outbox?: OutboxPayload) {
    return this.x.writes.submit((): WindowClaim => {
      const now = this.x.clock.now();
      const claimed = this.s.claim.run(tenant, key, now + ttlMs, now).changes === 1;
      if (!claimed) return this.deliveries.requeueFailing({ kind: 'violation', tenant, key }, now) > 0 ? 'requeued' : 'repeat';
      if (outbox) this.x.append(outboxEntries.violation(tenant, key, outbox, now));
      return 'claimed';
    });
  }

  /** Inside a sweep's transaction. */
  sweep(batch: number): number {
    return this.s.sweep.run(this.x.clock.now(), batch).changes;
  }
}
