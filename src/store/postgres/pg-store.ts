import type pg from 'pg';
import type { Clock } from '../../core/clock.js';
import { decideEvent, DUPLICATE, gapSize, type DeviceEvent, type DeviceState, type EventOutcome } from '../../core/event.js';
import {
  DEFAULT_EXPIRED_GRACE_MS,
  isStale,
  nextIncidentRecord,
  outboxEntries,
  RESOLUTION_MEMORY_MS,
  staleResult,
  type AckOutcome,
  type DedupStore,
  type DeviceSummary,
  type IncidentClaim,
  type IncidentDecisionResult,
  type IncidentRecord,
  type OutboxEntry,
  type OutboxPayload,
  type ReconcileOutcome,
  type SharedStore,
} from '../contract.js';
import type { WindowClaim } from '../delivery-contract.js';
import { PgDeliveries } from './pg-deliveries.js';
import { transaction, type Queryable } from './pool.js';
import { migrate } from './migrate.js';
import { currentRequestId } from '../../observe/request-context.js';
import { decideFromOutcome } from '../../core/decision.js';
import type { AuditRow, Ledger, LedgerInputs } from '../contract.js';

const INCIDENT = `tenant, key, fingerprint, created_at AS "createdAt", last_seen_at AS "lastSeenAt", refires, updates, expires_at AS "expiresAt"`;
const DEVICE = `tenant, device, boot, sequence, state, observed_at AS "observedAt"`;
const SWEEP_BATCH = 1000;

/** Operations on one key (or device) take this advisory lock inside their transaction. */
const keyLock = (tenant: string, key: string) => `${tenant.length}:${tenant}${key}`;

/**
 * Postgres (pg, a pool). Every operation is one transaction; those that read
 * then write first take an advisory transaction lock on their key, so the
 * read and the write are one atomic step across every replica sharing the
 * database. Times come from the injected clock, as in the SQLite store.
 */
export class PgStore implements SharedStore {
  readonly kind = 'postgres';
  readonly deliveries: PgDeliveries;
  private readonly graceMs: number;

  constructor(
    private readonly pool: pg.Pool,
    private readonly clock: Clock,
    options: { expiredGraceMs?: number; schema?: string; ledger?: Ledger } = {},
  ) {
    this.graceMs = options.expiredGraceMs ?? DEFAULT_EXPIRED_GRACE_MS;
    this.schema = options.schema ?? null;
    this.ledger = options.ledger ?? null;
    this.deliveries = new PgDeliveries(pool, clock);
  }

  private readonly ledger: Ledger | null;

  /** In ledger mode, one audit row, in the caller's transaction. */
  private async audit(c: Queryable, input: keyof LedgerInputs, row: { tenant: string; key: string; decision: string; reason: string }, now: number) {
    if (!this.ledger?.inputs()[input]) return;
    await c.query(`INSERT INTO audit (at, tenant, kind, key, decision, reason, replica, request_id) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`, [
      now, row.tenant, input, row.key, row.decision, row.reason, this.ledger.replica, currentRequestId(),
    ]);
  }

  /** The audit trail of one key, oldest first. */
  async auditTrail(tenant: string, key: string, limit: number): Promise<AuditRow[]> {
    return (
      await this.pool.query<AuditRow>(
        `SELECT at, kind, key, decision, reason, replica, request_id AS "requestId" FROM audit WHERE tenant = $1 AND key = $2 ORDER BY id LIMIT $3`,
        [tenant, key, limit],
      )
    ).rows;
  }

  private readonly schema: string | null;

  /** Applies the migrations not yet applied (when the store was opened with its schema name). */
  async init(): Promise<void> {
    if (this.schema) await migrate(this.pool, this.schema);
  }

  private async append(c: Queryable, e: OutboxEntry | null): Promise<void> {
    if (!e) return;
    await c.query(`INSERT INTO outbox (tenant, kind, action, key, severity, summary, data, at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`, [
      e.tenant, e.kind, e.action, e.key, e.severity, e.summary, JSON.stringify(e.data), e.at,
    ]);
  }

  /** Claims the key or replaces its record: the one write of a decision and of a replay. */
  private async saveIncident(c: Queryable, r: IncidentRecord): Promise<void> {
    await c.query(
      `INSERT INTO incidents (tenant, key, fingerprint, created_at, last_seen_at, refires, updates, expires_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
       ON CONFLICT (tenant, key) DO UPDATE SET fingerprint = excluded.fingerprint, created_at = excluded.created_at, last_seen_at = excluded.last_seen_at,
         refires = excluded.refires, updates = excluded.updates, expires_at = excluded.expires_at`,
      [r.tenant, r.key, r.fingerprint, r.createdAt, r.lastSeenAt, r.refires, r.updates, r.expiresAt],
    );
  }

  private async incident(c: Queryable, tenant: string, key: string): Promise<IncidentRecord | null> {
    return (await c.query<IncidentRecord>(`SELECT ${INCIDENT} FROM incidents WHERE tenant = $1 AND key = $2`, [tenant, key])).rows[0] ?? null;
  }

  decideIncident(claim: IncidentClaim): Promise<IncidentDecisionResult> {
    return transaction(this.pool, keyLock(claim.tenant, claim.key), async (c) => {
      const now = this.clock.now();
      const row = await this.incident(c, claim.tenant, claim.key);
      if (claim.episodeStartedAt !== undefined) {
        const r = (await c.query<{ endedAt: number }>(`SELECT ended_at AS "endedAt" FROM resolutions WHERE tenant = $1 AND key = $2 AND expires_at > $3`, [claim.tenant, claim.key, now])).rows[0];
        if (isStale(claim, r?.endedAt ?? null)) {
          await this.audit(c, 'incidents', { tenant: claim.tenant, key: claim.key, decision: 'SUPPRESS', reason: 'stale' }, now);
          return staleResult(row && row.expiresAt > now ? row : null, claim, now);
        }
      }
      const existing = row && row.expiresAt + this.graceMs > now ? row : null;
      const result = nextIncidentRecord(existing, claim, now);
      await this.saveIncident(c, result.record);
      if (result.outcome.kind !== 'created') await this.deliveries.requeueFailing(c, { kind: 'incident', tenant: claim.tenant, key: claim.key }, now);
      await this.append(c, outboxEntries.incident(claim, result.outcome.kind, now));
      if (this.ledger) {
        const d = decideFromOutcome(result.outcome, this.ledger.raceWindowMs());
        await this.audit(c, 'incidents', { tenant: claim.tenant, key: claim.key, decision: d.decision, reason: d.reason }, now);
      }
      return result;
    });
  }

  /**
   * Replays one incident decided in the fail-open journal (the rules of
   * reconcile-incident.lua): a key nobody created meanwhile is claimed; a key
   * another replica created is merged, the provisional CREATE counted as one
   * more arrival. Idempotent per journalId; audited in ledger mode.
   */
  reconcileIncident(rec: IncidentRecord, ttlMs: number, journalId: string): Promise<ReconcileOutcome> {
    return transaction(this.pool, keyLock(rec.tenant, rec.key), async (c) => {
      const now = this.clock.now();
      const done = await c.query(`SELECT 1 FROM reconciled WHERE tenant = $1 AND key = $2 AND journal_id = $3`, [rec.tenant, rec.key, journalId]);
      if (done.rowCount) return 'done';
      const row = await this.incident(c, rec.tenant, rec.key);
      const live = row && row.expiresAt > now ? row : null;
      const next = live
        ? { createdAt: live.createdAt, refires: live.refires + rec.refires + 1, updates: live.updates + rec.updates + (live.fingerprint !== rec.fingerprint ? 1 : 0) }
        : { createdAt: now, refires: rec.refires, updates: rec.updates };
      await this.saveIncident(c, { ...rec, ...next, lastSeenAt: now, expiresAt: now + ttlMs });
      const outcome: ReconcileOutcome = live ? 'merged' : 'claimed';
      await c.query(`INSERT INTO reconciled (tenant, key, journal_id, outcome, expires_at) VALUES ($1, $2, $3, $4, $5)`, [rec.tenant, rec.key, journalId, outcome, now + 86_400_000]);
      await this.audit(c, 'incidents', { tenant: rec.tenant, key: rec.key, decision: live ? 'SUPPRESS' : 'CREATE', reason: `replayed_${outcome}` }, now);
      return outcome;
    });
  }

  async getIncident(tenant: string, key: string) {
    const row = await this.incident(this.pool, tenant, key);
    return row && row.expiresAt > this.clock.now() ? row : null;
  }

  closeIncident(tenant: string, key: string, resolvedAt?: number) {
    return transaction(this.pool, keyLock(tenant, key), async (c) => {
      const now = this.clock.now();
      if (resolvedAt !== undefined) {
        await c.query(
          `INSERT INTO resolutions (tenant, key, ended_at, expires_at) VALUES ($1, $2, $3, $4)
           ON CONFLICT (tenant, key) DO UPDATE SET
             ended_at = CASE WHEN resolutions.expires_at > $5 AND resolutions.ended_at > excluded.ended_at THEN resolutions.ended_at ELSE excluded.ended_at END,
             expires_at = excluded.expires_at`,
          [tenant, key, resolvedAt, now + RESOLUTION_MEMORY_MS, now],
        );
      }
      const row = await this.incident(c, tenant, key);
      await c.query('DELETE FROM incidents WHERE tenant = $1 AND key = $2', [tenant, key]);
      await c.query('DELETE FROM acks WHERE tenant = $1 AND key = $2', [tenant, key]);
      const live = row && row.expiresAt > now ? row : null;
      if (live) await this.append(c, outboxEntries.close(live, now));
      await this.audit(c, 'incidents', { tenant, key, decision: live ? 'CLOSE' : 'NONE', reason: live ? 'closed' : 'not_live' }, now);
      return live;
    });
  }

  acknowledgeIncident(tenant: string, key: string) {
    return transaction(this.pool, keyLock(tenant, key), async (c): Promise<AckOutcome> => {
      const now = this.clock.now();
      const row = await this.incident(c, tenant, key);
      if (!row || row.expiresAt <= now) return 'absent';
      const r = await c.query(
        `INSERT INTO acks (tenant, key, created_at) VALUES ($1, $2, $3)
         ON CONFLICT (tenant, key) DO UPDATE SET created_at = excluded.created_at WHERE acks.created_at <> excluded.created_at`,
        [tenant, key, row.createdAt],
      );
      if (r.rowCount === 0) return 'repeat';
      await this.append(c, outboxEntries.acknowledged(row, now));
      await this.audit(c, 'incidents', { tenant, key, decision: 'UPDATE', reason: 'acknowledged' }, now);
      return 'acknowledged';
    });
  }

  async listIncidents(tenant: string, limit: number) {
    return (await this.pool.query<IncidentRecord>(`SELECT ${INCIDENT} FROM incidents WHERE tenant = $1 AND expires_at > $2 ORDER BY last_seen_at DESC LIMIT $3`, [tenant, this.clock.now(), limit])).rows;
  }

  async countLiveIncidents() {
    return (await this.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM incidents WHERE expires_at > $1', [this.clock.now()])).rows[0]!.n;
  }

  /** Small batches, each its own statement: no long lock. */
  async sweepExpired() {
    const now = this.clock.now();
    const batch = async (sql: string, ...args: unknown[]) => (await this.pool.query(sql, [...args, SWEEP_BATCH])).rowCount ?? 0;
    return (
      (await batch(`DELETE FROM incidents WHERE (tenant, key) IN (SELECT tenant, key FROM incidents WHERE expires_at <= $1 LIMIT $2)`, now - this.graceMs)) +
      (await batch(`DELETE FROM events_seen WHERE (tenant, device, boot, sequence) IN (SELECT tenant, device, boot, sequence FROM events_seen WHERE expires_at <= $1 LIMIT $2)`, now)) +
      (await batch(`DELETE FROM windows WHERE (tenant, key) IN (SELECT tenant, key FROM windows WHERE expires_at <= $1 LIMIT $2)`, now)) +
      (await batch(`DELETE FROM resolutions WHERE (tenant, key) IN (SELECT tenant, key FROM resolutions WHERE expires_at <= $1 LIMIT $2)`, now)) +
      (await batch(`DELETE FROM reconciled WHERE (tenant, key, journal_id) IN (SELECT tenant, key, journal_id FROM reconciled WHERE expires_at <= $1 LIMIT $2)`, now)) +
      (await batch(`DELETE FROM acks WHERE (tenant, key) IN (SELECT a.tenant, a.key FROM acks a LEFT JOIN incidents i USING (tenant, key) WHERE i.key IS NULL LIMIT $1)`))
    );
  }

  applyEvent(e: DeviceEvent, retentionMs: number): Promise<EventOutcome> {
    return transaction(this.pool, keyLock(e.tenant, `device:${e.device}`), async (c) => {
      const now = this.clock.now();
      const identity = `${e.device}/${e.boot}/${e.sequence}`;
      const seen = await c.query(`SELECT 1 FROM events_seen WHERE tenant = $1 AND device = $2 AND boot = $3 AND sequence = $4 AND expires_at > $5`, [e.tenant, e.device, e.boot, e.sequence, now]);
      if (seen.rowCount) {
        await this.audit(c, 'events', { tenant: e.tenant, key: identity, decision: 'duplicate', reason: '' }, now);
        return DUPLICATE;
      }
      const current = (await c.query<DeviceState>(`SELECT ${DEVICE} FROM devices WHERE tenant = $1 AND device = $2`, [e.tenant, e.device])).rows[0] ?? null;
      const bootSeen = Boolean((await c.query(`SELECT 1 FROM device_boots WHERE tenant = $1 AND device = $2 AND boot = $3`, [e.tenant, e.device, e.boot])).rowCount);
      const { result, next } = decideEvent(current, bootSeen, e);
      if (next) {
        await c.query(
          `INSERT INTO devices (tenant, device, boot, sequence, state, observed_at, gaps) VALUES ($1, $2, $3, $4, $5, $6, $7)
           ON CONFLICT (tenant, device) DO UPDATE SET boot = excluded.boot, sequence = excluded.sequence, state = excluded.state,
             observed_at = excluded.observed_at, gaps = devices.gaps + excluded.gaps`,
          [next.tenant, next.device, next.boot, next.sequence, next.state, next.observedAt, gapSize(result.gap)],
        );
        await c.query(`INSERT INTO device_boots (tenant, device, boot) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`, [e.tenant, e.device, e.boot]);
        await c.query(
          `INSERT INTO events_seen (tenant, device, boot, sequence, expires_at) VALUES ($1, $2, $3, $4, $5)
           ON CONFLICT (tenant, device, boot, sequence) DO UPDATE SET expires_at = excluded.expires_at`,
          [e.tenant, e.device, e.boot, e.sequence, now + retentionMs],
        );
        if (result.transition) await this.append(c, outboxEntries.transition(e, result.transition, now));
      }
      await this.audit(c, 'events', { tenant: e.tenant, key: identity, decision: result.outcome, reason: result.reason ?? '' }, now);
      return result;
    });
  }

  async getDevice(tenant: string, device: string) {
    return (await this.pool.query<DeviceState>(`SELECT ${DEVICE} FROM devices WHERE tenant = $1 AND device = $2`, [tenant, device])).rows[0] ?? null;
  }

  async listDevices(tenant: string | null, limit: number) {
    return (await this.pool.query<DeviceSummary>(`SELECT ${DEVICE}, gaps FROM devices WHERE ($1::text IS NULL OR tenant = $1) ORDER BY observed_at LIMIT $2`, [tenant, limit])).rows;
  }

  async countStaleDevices(observedBefore: number) {
    return (await this.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM devices WHERE observed_at < $1', [observedBefore])).rows[0]!.n;
  }

  /** One INSERT … ON CONFLICT … WHERE claims; a repeat's re-queue is in the same transaction. */
  claimWindow(tenant: string, key: string, ttlMs: number, outbox?: OutboxPayload) {
    return transaction(this.pool, keyLock(tenant, key), async (c): Promise<WindowClaim> => {
      const now = this.clock.now();
      const r = await c.query(
        `INSERT INTO windows (tenant, key, expires_at) VALUES ($1, $2, $3)
         ON CONFLICT (tenant, key) DO UPDATE SET expires_at = excluded.expires_at WHERE windows.expires_at <= $4`,
        [tenant, key, now + ttlMs, now],
      );
      const claim: WindowClaim =
        r.rowCount === 1 ? 'claimed' : (await this.deliveries.requeueFailing(c, { kind: 'violation', tenant, key }, now)) > 0 ? 'requeued' : 'repeat';
      if (claim === 'claimed' && outbox) await this.append(c, outboxEntries.violation(tenant, key, outbox, now));
      await this.audit(c, 'violations', { tenant, key, decision: claim === 'repeat' ? 'SUPPRESS' : 'CREATE', reason: claim }, now);
      return claim;
    });
  }

  async listOutbox(): Promise<OutboxEntry[]> {
    const { rows } = await this.pool.query<Omit<OutboxEntry, 'data'> & { data: string }>(`SELECT tenant, kind, action, key, severity, summary, data, at FROM outbox ORDER BY id`);
    return rows.map((r) => ({ ...r, data: JSON.parse(r.data) as Record<string, unknown> }));
  }

  async ping() {
    await this.pool.query('SELECT 1');
  }

  async close() {
    await this.pool.end();
  }
}
