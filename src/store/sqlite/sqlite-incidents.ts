import { encodeRoute, joinRoute } from '../../core/outbox.js';
import {
  type AckOutcome,
  DEFAULT_EXPIRED_GRACE_MS,
  type EscalateOutcome,
  type EscalationStep,
  type IncidentClaim,
  type IncidentDecisionResult,
  incidentOfRow,
  type IncidentRow,
  type IncidentStore,
  type Origin,
  amendsAnother,
  isStale,
  nextIncidentRecord,
  outboxEntries,
  RESOLUTION_MEMORY_MS,
  rowOfIncident,
  staleResult,
} from '../contract/index.js';
import type { SqliteDb } from './sqlite-db.js';
import type { SqliteDeliveries } from './sqlite-deliveries.js';

/**
 * One statement per step. Each operation runs its statements inside a single
 * BEGIN IMMEDIATE transaction (see group-commit.ts), which holds SQLite's write
 * lock across the read and the write: that transaction is the atomic step, even
 * with several processes sharing the file.
 */
export const INCIDENT_COLUMNS = `tenant, key, fingerprint, created_at AS createdAt, last_seen_at AS lastSeenAt, refires, updates, expires_at AS expiresAt, route, identity, latest`;

const SQL = {
  /** in: tenant, key. out: the row or nothing. */
  select: `SELECT ${INCIDENT_COLUMNS} FROM incidents WHERE tenant = ? AND key = ?`,
  /** in: the whole record. Claims the key or replaces the record of the key. */
  upsert: `
INSERT INTO incidents (tenant, key, fingerprint, created_at, last_seen_at, refires, updates, expires_at, route, identity, latest)
VALUES (@tenant, @key, @fingerprint, @createdAt, @lastSeenAt, @refires, @updates, @expiresAt, @route, @identity, @latest)
ON CONFLICT (tenant, key) DO UPDATE SET
  fingerprint = excluded.fingerprint, created_at = excluded.created_at,
  last_seen_at = excluded.last_seen_at, refires = excluded.refires,
  updates = excluded.updates, expires_at = excluded.expires_at, route = excluded.route,
  identity = excluded.identity, latest = excluded.latest`,
  /** in: tenant, key. A close deletes live and expired-in-grace records alike; the caller reads the row first. */
  delete: `DELETE FROM incidents WHERE tenant = ? AND key = ?`,
  /** in: tenant, key, the live episode's created_at. changes() is 1 exactly when this episode was not acknowledged yet. */
  acknowledge: `
INSERT INTO acks (tenant, key, created_at) VALUES (?, ?, ?)
ON CONFLICT (tenant, key) DO UPDATE SET created_at = excluded.created_at WHERE acks.created_at <> excluded.created_at`,
  /** in: tenant, key. */
  deleteAck: `DELETE FROM acks WHERE tenant = ? AND key = ?`,
  /** The record and whether its episode is the one acknowledged, in one read (as Postgres's). */
  selectWithAck: `
SELECT ${INCIDENT_COLUMNS},
       EXISTS (SELECT 1 FROM acks a WHERE a.tenant = incidents.tenant AND a.key = incidents.key AND a.created_at = incidents.created_at) AS acked
  FROM incidents WHERE tenant = ? AND key = ?`,
  /** in: tenant, key, now. The recorded resolution still remembered, if any. */
  resolution: `SELECT ended_at AS endedAt FROM resolutions WHERE tenant = ? AND key = ? AND expires_at > ?`,
  /** in: tenant, key, endedAt, expiresAt, now. Keeps the later end (of a still remembered one). */
  recordResolution: `
INSERT INTO resolutions (tenant, key, ended_at, expires_at) VALUES (@tenant, @key, @endedAt, @expiresAt)
ON CONFLICT (tenant, key) DO UPDATE SET
  ended_at = CASE WHEN resolutions.expires_at > @now AND resolutions.ended_at > excluded.ended_at THEN resolutions.ended_at ELSE excluded.ended_at END,
  expires_at = excluded.expires_at`,
  /** in: now minus the grace, batch size. Small batches keep the write lock short. */
  sweep: `DELETE FROM incidents WHERE (tenant, key) IN (SELECT tenant, key FROM incidents WHERE expires_at <= ? LIMIT ?)`,
  /** in: batch. Markers whose incident is gone (swept). */
  sweepAcks: `
DELETE FROM acks WHERE (tenant, key) IN (
  SELECT a.tenant, a.key FROM acks a LEFT JOIN incidents i ON i.tenant = a.tenant AND i.key = a.key WHERE i.key IS NULL LIMIT ?)`,
  /** in: tenant, key. The episode an escalation step was last written for, and the step. */
  escalation: `SELECT created_at AS episode, step FROM escalations WHERE tenant = ? AND key = ?`,
  /** in: tenant, key, episode, step. */
  recordEscalation: `
INSERT INTO escalations (tenant, key, created_at, step) VALUES (?, ?, ?, ?)
ON CONFLICT (tenant, key) DO UPDATE SET created_at = excluded.created_at, step = excluded.step`,
  /** in: route, tenant, key. */
  setRoute: `UPDATE incidents SET route = ? WHERE tenant = ? AND key = ?`,
  /** in: batch. Escalations whose incident is gone (swept or closed). */
  sweepEscalations: `
DELETE FROM escalations WHERE (tenant, key) IN (
  SELECT e.tenant, e.key FROM escalations e LEFT JOIN incidents i ON i.tenant = e.tenant AND i.key = e.key WHERE i.key IS NULL LIMIT ?)`,
  /** in: now, batch. */
  sweepResolutions: `DELETE FROM resolutions WHERE (tenant, key) IN (SELECT tenant, key FROM resolutions WHERE expires_at <= ? LIMIT ?)`,
};

/** Incidents in the SQLite file; every write is one GroupCommit transaction. */
export class SqliteIncidents implements IncidentStore {
  private readonly s;

  constructor(
    private readonly x: SqliteDb,
    private readonly deliveries: SqliteDeliveries,
    private readonly expiredGraceMs = DEFAULT_EXPIRED_GRACE_MS,
  ) {
    const db = x.db;
    this.s = {
      select: db.prepare<[string, string], IncidentRow>(SQL.select),
      upsert: db.prepare<[IncidentRow]>(SQL.upsert),
      delete: db.prepare<[string, string]>(SQL.delete),
      acknowledge: db.prepare<[string, string, number]>(SQL.acknowledge),
      deleteAck: db.prepare<[string, string]>(SQL.deleteAck),
      selectWithAck: db.prepare<[string, string], IncidentRow & { acked: number }>(SQL.selectWithAck),
      resolution: db.prepare<[string, string, number], { endedAt: number }>(SQL.resolution),
      recordResolution: db.prepare<[{ tenant: string; key: string; endedAt: number; expiresAt: number; now: number }]>(SQL.recordResolution),
      sweep: db.prepare<[number, number]>(SQL.sweep),
      sweepAcks: db.prepare<[number]>(SQL.sweepAcks),
      sweepResolutions: db.prepare<[number, number]>(SQL.sweepResolutions),
      escalation: db.prepare<[string, string], { episode: number; step: number }>(SQL.escalation),
      recordEscalation: db.prepare<[string, string, number, number]>(SQL.recordEscalation),
      setRoute: db.prepare<[string | null, string, string]>(SQL.setRoute),
      sweepEscalations: db.prepare<[number]>(SQL.sweepEscalations),
    };
  }

  decide(claim: IncidentClaim) {
    return this.x.writes.submit(() => this.decideIn(claim));
  }

  /** `decide`'s step, run inside a write the caller submitted (the fail-open journal's, with its memory of the outage). */
  decideIn(claim: IncidentClaim): IncidentDecisionResult {
    const now = this.x.clock.now();
    const stored = this.s.select.get(claim.tenant, claim.key);
    const row = stored && incidentOfRow(stored);
    const live = row && row.expiresAt > now ? row : null;
    if (
      (claim.episodeStartedAt !== undefined && isStale(claim, this.s.resolution.get(claim.tenant, claim.key, now)?.endedAt ?? null)) ||
      amendsAnother(claim, live)
    ) {
      return staleResult(live, claim, now);
    }
    const existing = row && row.expiresAt + this.expiredGraceMs > now ? row : null;
    const result = nextIncidentRecord(existing, claim, now);
    this.s.upsert.run(rowOfIncident(result.record));
    // A re-fire gives the key's failing deliveries another go, in this transaction.
    if (result.outcome.kind !== 'created') this.deliveries.requeueFailing({ kind: 'incident', tenant: claim.tenant, key: claim.key }, now);
    this.x.append(outboxEntries.incident(claim, result.outcome.kind, result.record, now));
    return result;
  }

  async get(tenant: string, key: string) {
    const got = this.s.selectWithAck.get(tenant, key);
    if (!got || got.expiresAt <= this.x.clock.now()) return null;
    const { acked, ...row } = got;
    const rec = incidentOfRow(row);
    return acked ? { ...rec, acknowledged: true as const } : rec;
  }

  close(tenant: string, key: string, resolvedAt?: number, _origin?: Origin, episode?: number) {
    return this.x.writes.submit(() => {
      const now = this.x.clock.now();
      const row = this.s.select.get(tenant, key);
      // Another episode than the one named (an id read earlier): nothing of this key is the caller's to close.
      if (episode !== undefined && row?.createdAt !== episode) return null;
      if (resolvedAt !== undefined) this.s.recordResolution.run({ tenant, key, endedAt: resolvedAt, expiresAt: now + RESOLUTION_MEMORY_MS, now });
      this.s.delete.run(tenant, key);
      this.s.deleteAck.run(tenant, key);
      const live = row && row.expiresAt > now ? incidentOfRow(row) : null;
      if (live) this.x.append(outboxEntries.close(live, now));
      return live ?? null;
    });
  }

  /** One INSERT … ON CONFLICT … WHERE marks the episode; the update entry is in the same transaction. */
  acknowledge(tenant: string, key: string, _origin?: Origin, episode?: number) {
    return this.x.writes.submit((): AckOutcome => {
      const now = this.x.clock.now();
      const row = this.s.select.get(tenant, key);
      if (!row || row.expiresAt <= now || (episode !== undefined && row.createdAt !== episode)) return 'absent';
      if (this.s.acknowledge.run(tenant, key, row.createdAt).changes === 0) return 'repeat';
      this.x.append(outboxEntries.acknowledged(incidentOfRow(row), now));
      return 'acknowledged';
    });
  }

  /** The step's reads and writes in one transaction (the write queue's). */
  escalate(tenant: string, key: string, step: EscalationStep) {
    return this.x.writes.submit((): EscalateOutcome => {
      const now = this.x.clock.now();
      const got = this.s.selectWithAck.get(tenant, key);
      if (!got || got.expiresAt <= now || got.createdAt !== step.episode) return 'absent';
      if (got.acked) return 'acknowledged';
      const was = this.s.escalation.get(tenant, key);
      if (was && was.episode === step.episode && was.step >= step.step) return 'done';
      if (now < step.dueAt) return 'early';
      this.s.recordEscalation.run(tenant, key, step.episode, step.step);
      const { acked: _, ...row } = got;
      const rec = incidentOfRow(row);
      const route = joinRoute(rec.route, step.to);
      if (route) this.s.setRoute.run(encodeRoute(route), tenant, key);
      this.x.append(outboxEntries.escalated(tenant, key, step, now));
      return 'escalated';
    });
  }

  /** Inside a sweep's transaction. */
  sweep(batch: number): number {
    const now = this.x.clock.now();
    return (
      this.s.sweep.run(now - this.expiredGraceMs, batch).changes +
      this.s.sweepAcks.run(batch).changes +
      this.s.sweepEscalations.run(batch).changes +
      this.s.sweepResolutions.run(now, batch).changes
    );
  }
}
