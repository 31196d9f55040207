import { decideFromOutcome } from '../../core/decision.js';
import {
  type AckOutcome,
  DEFAULT_EXPIRED_GRACE_MS,
  type IncidentClaim,
  type IncidentDecisionResult,
  type IncidentRecord,
  isStale,
  nextIncidentRecord,
  type Origin,
  outboxEntries,
  RECONCILE_MARKER_MS,
  type ReconcileOutcome,
  reconciledRecord,
  RESOLUTION_MEMORY_MS,
  type SharedIncidentStore,
  SWEEP_BATCH,
  staleResult,
} from '../contract/index.js';
import { keyLock, type PgDb } from './pg-db.js';
import type { PgDeliveries } from './pg-deliveries.js';
import { type Queryable, transaction } from './pool.js';

export const INCIDENT_COLUMNS = `tenant, key, fingerprint, created_at AS "createdAt", last_seen_at AS "lastSeenAt", refires, updates, expires_at AS "expiresAt"`;

/** One statement per step; each operation runs its steps in one transaction under the key's advisory lock. */
const SQL = {
  select: `SELECT ${INCIDENT_COLUMNS} FROM incidents WHERE tenant = $1 AND key = $2`,
  /** Claims the key or replaces its record: the one write of a decision and of a replay. */
  upsert: `
INSERT INTO incidents (tenant, key, fingerprint, created_at, last_seen_at, refires, updates, expires_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
ON CONFLICT (tenant, key) DO UPDATE SET fingerprint = excluded.fingerprint, created_at = excluded.created_at, last_seen_at = excluded.last_seen_at,
  refires = excluded.refires, updates = excluded.updates, expires_at = excluded.expires_at`,
  delete: `DELETE FROM incidents WHERE tenant = $1 AND key = $2`,
  resolution: `SELECT ended_at AS "endedAt" FROM resolutions WHERE tenant = $1 AND key = $2 AND expires_at > $3`,
  /** Keeps the later end (of a still remembered one). */
  recordResolution: `
INSERT INTO resolutions (tenant, key, ended_at, expires_at) VALUES ($1, $2, $3, $4)
ON CONFLICT (tenant, key) DO UPDATE SET
  ended_at = CASE WHEN resolutions.expires_at > $5 AND resolutions.ended_at > excluded.ended_at THEN resolutions.ended_at ELSE excluded.ended_at END,
  expires_at = excluded.expires_at`,
  /** rowCount is 1 exactly when this episode was not acknowledged yet. */
  acknowledge: `
INSERT INTO acks (tenant, key, created_at) VALUES ($1, $2, $3)
ON CONFLICT (tenant, key) DO UPDATE SET created_at = excluded.created_at WHERE acks.created_at <> excluded.created_at`,
  deleteAck: `DELETE FROM acks WHERE tenant = $1 AND key = $2`,
  reconciled: `SELECT 1 FROM reconciled WHERE tenant = $1 AND key = $2 AND journal_id = $3`,
  markReconciled: `INSERT INTO reconciled (tenant, key, journal_id, outcome, expires_at) VALUES ($1, $2, $3, $4, $5)`,
  sweep: [
    `DELETE FROM incidents WHERE (tenant, key) IN (SELECT tenant, key FROM incidents WHERE expires_at <= $1 LIMIT $2)`,
    `DELETE FROM resolutions WHERE (tenant, key) IN (SELECT tenant, key FROM resolutions WHERE expires_at <= $1 LIMIT $2)`,
    `DELETE FROM reconciled WHERE (tenant, key, journal_id) IN (SELECT tenant, key, journal_id FROM reconciled WHERE expires_at <= $1 LIMIT $2)`,
  ],
  /** Markers whose incident is gone. */
  sweepAcks: `DELETE FROM acks WHERE (tenant, key) IN (SELECT a.tenant, a.key FROM acks a LEFT JOIN incidents i USING (tenant, key) WHERE i.key IS NULL LIMIT $1)`,
};

/**
 * Incidents in Postgres. Operations that read then write first take an
 * advisory transaction lock on their key, so the read and the write are one
 * atomic step across every replica sharing the database.
 */
export class PgIncidents implements SharedIncidentStore {
  constructor(
    private readonly x: PgDb,
    private readonly deliveries: PgDeliveries,
    private readonly graceMs = DEFAULT_EXPIRED_GRACE_MS,
  ) {}

  private async select(c: Queryable, tenant: string, key: string): Promise<IncidentRecord | null> {
    return (await c.query<IncidentRecord>(SQL.select, [tenant, key])).rows[0] ?? null;
  }

  private async save(c: Queryable, r: IncidentRecord): Promise<void> {
    await c.query(SQL.upsert, [r.tenant, r.key, r.fingerprint, r.createdAt, r.lastSeenAt, r.refires, r.updates, r.expiresAt]);
  }

  decide(claim: IncidentClaim, origin?: Origin): Promise<IncidentDecisionResult> {
    return transaction(this.x.pool, keyLock(claim.tenant, claim.key), async (c) => {
      const now = this.x.clock.now();
      const row = await this.select(c, claim.tenant, claim.key);
      if (claim.episodeStartedAt !== undefined) {
        const r = (await c.query<{ endedAt: number }>(SQL.resolution, [claim.tenant, claim.key, now])).rows[0];
        if (isStale(claim, r?.endedAt ?? null)) {
          await this.x.audit(c, 'incidents', { tenant: claim.tenant, key: claim.key, decision: 'SUPPRESS', reason: 'stale' }, now, origin);
          return staleResult(row && row.expiresAt > now ? row : null, claim, now);
        }
      }
      const existing = row && row.expiresAt + this.graceMs > now ? row : null;
      const result = nextIncidentRecord(existing, claim, now);
      await this.save(c, result.record);
      if (result.outcome.kind !== 'created') await this.deliveries.requeueFailing(c, { kind: 'incident', tenant: claim.tenant, key: claim.key }, now);
      await this.x.append(c, outboxEntries.incident(claim, result.outcome.kind, now));
      if (this.x.ledger) {
        const d = decideFromOutcome(result.outcome, this.x.ledger.raceWindowMs());
        await this.x.audit(c, 'incidents', { tenant: claim.tenant, key: claim.key, decision: d.decision, reason: d.reason }, now, origin);
      }
      return result;
    });
  }

  /**
   * Replays one incident decided in the fail-open journal (the rule is
   * `reconciledRecord`, which reconcile-incident.lua keeps too). Idempotent
   * per journalId; audited in ledger mode.
   */
  reconcile(rec: IncidentRecord, ttlMs: number, journalId: string): Promise<ReconcileOutcome> {
    return transaction(this.x.pool, keyLock(rec.tenant, rec.key), async (c) => {
      const now = this.x.clock.now();
      if ((await c.query(SQL.reconciled, [rec.tenant, rec.key, journalId])).rowCount) return 'done';
      const row = await this.select(c, rec.tenant, rec.key);
      const { record, outcome } = reconciledRecord(rec, row && row.expiresAt > now ? row : null, ttlMs, now);
      await this.save(c, record);
      await c.query(SQL.markReconciled, [rec.tenant, rec.key, journalId, outcome, now + RECONCILE_MARKER_MS]);
      await this.x.audit(
        c,
        'incidents',
        { tenant: rec.tenant, key: rec.key, decision: outcome === 'merged' ? 'SUPPRESS' : 'CREATE', reason: `replayed_${outcome}` },
        now,
      );
      return outcome;
    });
  }

  async get(tenant: string, key: string) {
    const row = await this.select(this.x.pool, tenant, key);
    return row && row.expiresAt > this.x.clock.now() ? row : null;
  }

  close(tenant: string, key: string, resolvedAt?: number, origin?: Origin) {
    return transaction(this.x.pool, keyLock(tenant, key), async (c) => {
      const now = this.x.clock.now();
      if (resolvedAt !== undefined) await c.query(SQL.recordResolution, [tenant, key, resolvedAt, now + RESOLUTION_MEMORY_MS, now]);
      const row = await this.select(c, tenant, key);
      await c.query(SQL.delete, [tenant, key]);
      await c.query(SQL.deleteAck, [tenant, key]);
      const live = row && row.expiresAt > now ? row : null;
      if (live) await this.x.append(c, outboxEntries.close(live, now));
      await this.x.audit(c, 'incidents', { tenant, key, decision: live ? 'CLOSE' : 'NONE', reason: live ? 'closed' : 'not_live' }, now, origin);
      return live;
    });
  }

  acknowledge(tenant: string, key: string, origin?: Origin) {
    return transaction(this.x.pool, keyLock(tenant, key), async (c): Promise<AckOutcome> => {
      const now = this.x.clock.now();
      const row = await this.select(c, tenant, key);
      if (!row || row.expiresAt <= now) return 'absent';
      if ((await c.query(SQL.acknowledge, [tenant, key, row.createdAt])).rowCount === 0) return 'repeat';
      await this.x.append(c, outboxEntries.acknowledged(row, now));
      await this.x.audit(c, 'incidents', { tenant, key, decision: 'UPDATE', reason: 'acknowledged' }, now, origin);
      return 'acknowledged';
    });
  }

  /** Small batches, each its own statement: no long lock. */
  async sweep(): Promise<number> {
    const now = this.x.clock.now();
    const [incidents, ...rest] = SQL.sweep;
    let n = (await this.x.pool.query(incidents!, [now - this.graceMs, SWEEP_BATCH])).rowCount ?? 0;
    for (const sql of rest) n += (await this.x.pool.query(sql, [now, SWEEP_BATCH])).rowCount ?? 0;
    return n + ((await this.x.pool.query(SQL.sweepAcks, [SWEEP_BATCH])).rowCount ?? 0);
  }
}
