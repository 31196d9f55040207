import type { ClaimOutcome } from '../../core/decision.js';
import {
  type AckOutcome,
  DEFAULT_EXPIRED_GRACE_MS,
  type EscalateOutcome,
  type EscalationStep,
  type IncidentClaim,
  type IncidentDecisionResult,
  incidentOfRow,
  type IncidentRecord,
  type IncidentRow,
  type Origin,
  RECONCILE_MARKER_MS,
  type ReconcileOutcome,
  RESOLUTION_MEMORY_MS,
  type SharedIncidentStore,
  SWEEP_BATCH,
  claimShown,
  outboxEntries,
  storedShown,
} from '../contract/index.js';
import { keyLock, type PgDb } from './pg-db.js';
import { encodeRoute, type OutboxPayload } from '../../core/outbox.js';

export const INCIDENT_COLUMNS = `tenant, key, fingerprint, created_at AS "createdAt", last_seen_at AS "lastSeenAt", refires, updates, expires_at AS "expiresAt", route, identity, latest`;

/** Each operation is one call of its function (migration 006), which takes the key's advisory lock and does the whole step. */
const SQL = {
  decide: `SELECT outcome, previous_fingerprint AS "previousFingerprint", expired_updates AS "expiredUpdates", fingerprint,
  created_at AS "createdAt", last_seen_at AS "lastSeenAt", refires, updates, expires_at AS "expiresAt", route, identity, latest
  FROM oo_decide_incident($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21)`,
  close: `SELECT fingerprint, created_at AS "createdAt", last_seen_at AS "lastSeenAt", refires, updates, expires_at AS "expiresAt"
  FROM oo_close_incident($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
  acknowledge: `SELECT oo_acknowledge_incident($1, $2, $3, $4, $5, $6, $7, $8) AS outcome`,
  reconcile: `SELECT oo_reconcile_incident($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22) AS outcome`,
  /** The record and whether its episode is the one acknowledged, in one read. */
  selectWithAck: `
SELECT ${INCIDENT_COLUMNS},
       EXISTS (SELECT 1 FROM acks a WHERE a.tenant = incidents.tenant AND a.key = incidents.key AND a.created_at = incidents.created_at) AS acked
  FROM incidents WHERE tenant = $1 AND key = $2`,
  sweep: [
    `DELETE FROM incidents WHERE (tenant, key) IN (SELECT tenant, key FROM incidents WHERE expires_at <= $1 LIMIT $2)`,
    `DELETE FROM resolutions WHERE (tenant, key) IN (SELECT tenant, key FROM resolutions WHERE expires_at <= $1 LIMIT $2)`,
    `DELETE FROM reconciled WHERE (tenant, key, journal_id) IN (SELECT tenant, key, journal_id FROM reconciled WHERE expires_at <= $1 LIMIT $2)`,
    `DELETE FROM closes WHERE (tenant, key) IN (SELECT tenant, key FROM closes WHERE expires_at <= $1 LIMIT $2)`,
  ],
  /**
   * The function labels a SUPPRESS inside the race window `lost_race` (it
   * cannot know the claim's flight); when the engine finds the copy did not
   * race, its audit row is told so right after.
   */
  notRaced: `UPDATE audit SET reason = 'unchanged' WHERE tenant = $1 AND key = $2 AND at = $3 AND replica = $4 AND request_id = $5
  AND decision = 'SUPPRESS' AND reason = 'lost_race'`,
  /** Markers whose incident is gone. */
  escalate: `SELECT oo_escalate_incident($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) AS outcome`,
  sweepEscalations: `DELETE FROM escalations WHERE (tenant, key) IN (SELECT e.tenant, e.key FROM escalations e LEFT JOIN incidents i USING (tenant, key) WHERE i.key IS NULL LIMIT $1)`,
  sweepAcks: `DELETE FROM acks WHERE (tenant, key) IN (SELECT a.tenant, a.key FROM acks a LEFT JOIN incidents i USING (tenant, key) WHERE i.key IS NULL LIMIT $1)`,
};

interface DecideRow extends Omit<IncidentRow, 'tenant' | 'key'> {
  outcome: ClaimOutcome['kind'];
  previousFingerprint: string | null;
  expiredUpdates: number | null;
}

/** The function's row as the outcome nextIncidentRecord (or staleResult) gives. */
function claimOutcome(r: Pick<DecideRow, 'outcome' | 'previousFingerprint' | 'expiredUpdates' | 'createdAt'>, claim: IncidentClaim, now: number): ClaimOutcome {
  switch (r.outcome) {
    case 'created':
      return r.expiredUpdates === null ? { kind: 'created' } : { kind: 'created', expired: { updates: r.expiredUpdates } };
    case 'unchanged':
      return { kind: 'unchanged', createdAt: r.createdAt, now };
    case 'changed':
      return { kind: 'changed', previousFingerprint: r.previousFingerprint!, fingerprint: claim.fingerprint };
    case 'stale':
      return { kind: 'stale' };
  }
}

/**
 * Incidents in Postgres. Each operation is one server-side function call: it
 * takes the key's advisory transaction lock, so its read and its writes are
 * one atomic step across every replica sharing the database, in one round
 * trip.
 */
export class PgIncidents implements SharedIncidentStore {
  constructor(
    private readonly x: PgDb,
    private readonly graceMs = DEFAULT_EXPIRED_GRACE_MS,
  ) {}

  /** One round trip: oo_decide_incident (migration 006) takes the key's lock and makes the whole decision. */
  async decide(claim: IncidentClaim, origin?: Origin): Promise<IncidentDecisionResult> {
    const now = this.x.clock.now();
    const [audit, replica, requestId] = this.x.auditArgs('incidents', origin);
    const o = claim.outbox;
    // The function keeps the identity only on a create.
    const shown = storedShown(claimShown(claim));
    const data = o ? JSON.stringify(o.data) : null;
    const { rows } = await this.x.pool.query<DecideRow>(SQL.decide, [
      keyLock(claim.tenant, claim.key),
      claim.tenant,
      claim.key,
      claim.fingerprint,
      claim.ttlMs,
      this.graceMs,
      now,
      claim.episodeStartedAt ?? null,
      o?.severity ?? null,
      o?.summary ?? null,
      data,
      audit ? this.x.ledger!.raceWindowMs() : null,
      replica,
      requestId,
      encodeRoute(o?.route),
      shown.identity,
      shown.latest,
      claim.writer ?? null,
      claim.amends?.episode ?? null,
      claim.amends?.refires ?? null,
      claim.showsOnChange ?? null,
    ]);
    const { outcome, previousFingerprint, expiredUpdates, ...record } = rows[0]!;
    if (audit && outcome === 'unchanged') await this.relabel(claim, now, record.createdAt, replica, requestId, origin);
    return {
      outcome: claimOutcome({ outcome, previousFingerprint, expiredUpdates, createdAt: record.createdAt }, claim, now),
      record: incidentOfRow({ tenant: claim.tenant, key: claim.key, ...record }),
    };
  }

  /**
   * A SUPPRESS the function labelled `lost_race` by its window, which the
   * engine finds was a plain repeat (sent after the CREATE was answered,
   * however soon): its audit row says `unchanged`, as the answer does. A
   * second statement, after the decision committed: a replica that dies
   * between the two leaves that one row saying `lost_race`.
   */
  private async relabel(claim: IncidentClaim, now: number, createdAt: number, replica: string, requestId: string, origin?: Origin) {
    const age = now - createdAt;
    if (!origin?.raced || age > this.x.ledger!.raceWindowMs() || origin.raced(age)) return;
    await this.x.pool.query(SQL.notRaced, [claim.tenant, claim.key, now, replica, requestId]);
  }

  /**
   * Replays one incident decided in the fail-open journal (the rule is
   * SharedIncidentStore.reconcile's, which reconcile-incident.lua keeps too):
   * one call of oo_reconcile_incident. Idempotent per journalId; audited in
   * ledger mode.
   */
  async reconcile(
    rec: IncidentRecord,
    ttlMs: number,
    journalId: string,
    outbox?: OutboxPayload,
    owed: 'create' | 'update' | null = null,
    arrivedMsAgo = 0,
    writer?: string,
    createdMsAgo = arrivedMsAgo,
  ): Promise<ReconcileOutcome> {
    const [audit, replica] = this.x.auditArgs('incidents');
    const args = [keyLock(rec.tenant, rec.key), rec.tenant, rec.key, rec.fingerprint, rec.refires, rec.updates, ttlMs, journalId, RECONCILE_MARKER_MS];
    const { rows } = await this.x.pool.query<{ outcome: ReconcileOutcome }>(SQL.reconcile, [
      ...args,
      this.x.clock.now(),
      audit,
      replica,
      encodeRoute(rec.route),
      storedShown(rec).identity,
      storedShown(rec).latest,
      outbox?.severity ?? null,
      outbox?.summary ?? null,
      outbox ? JSON.stringify(outbox.data) : null,
      owed,
      Math.max(0, Math.round(arrivedMsAgo)),
      writer ?? null,
      Math.max(0, Math.round(createdMsAgo)),
    ]);
    return rows[0]!.outcome;
  }

  async get(tenant: string, key: string) {
    const got = (await this.x.pool.query<IncidentRow & { acked: boolean }>(SQL.selectWithAck, [tenant, key])).rows[0] ?? null;
    if (!got || got.expiresAt <= this.x.clock.now()) return null;
    const { acked, ...row } = got;
    const rec = incidentOfRow(row);
    return acked ? { ...rec, acknowledged: true as const } : rec;
  }

  async close(tenant: string, key: string, resolvedAt?: number, origin?: Origin, episode?: number): Promise<IncidentRecord | null> {
    const args = [keyLock(tenant, key), tenant, key, resolvedAt ?? null, RESOLUTION_MEMORY_MS, this.x.clock.now()];
    const r = (await this.x.pool.query<Omit<IncidentRecord, 'tenant' | 'key'>>(SQL.close, [...args, ...this.x.auditArgs('incidents', origin), episode ?? null]))
      .rows[0]!;
    return r.fingerprint === null ? null : { tenant, key, ...r };
  }

  async acknowledge(tenant: string, key: string, origin?: Origin, episode?: number): Promise<AckOutcome> {
    const args = [keyLock(tenant, key), tenant, key, this.x.clock.now(), ...this.x.auditArgs('incidents', origin), episode ?? null];
    return (await this.x.pool.query<{ outcome: AckOutcome }>(SQL.acknowledge, args)).rows[0]!.outcome;
  }

  /** One function under the key's lock (029_escalations.sql): its escalated data is written as the step's entry carries it. */
  async escalate(tenant: string, key: string, step: EscalationStep): Promise<EscalateOutcome> {
    const entry = outboxEntries.escalated(tenant, key, step, 0);
    const args = [keyLock(tenant, key), tenant, key, this.x.clock.now(), step.episode, step.step, step.dueAt, encodeRoute(step.to)];
    return (await this.x.pool.query<{ outcome: EscalateOutcome }>(SQL.escalate, [...args, entry.severity, entry.summary, JSON.stringify(entry.data)])).rows[0]!
      .outcome;
  }

  /** Small batches, each its own statement: no long lock. */
  async sweep(): Promise<number> {
    const now = this.x.clock.now();
    const [incidents, ...rest] = SQL.sweep;
    let n = (await this.x.pool.query(incidents!, [now - this.graceMs, SWEEP_BATCH])).rowCount ?? 0;
    for (const sql of rest) n += (await this.x.pool.query(sql, [now, SWEEP_BATCH])).rowCount ?? 0;
    n += (await this.x.pool.query(SQL.sweepEscalations, [SWEEP_BATCH])).rowCount ?? 0;
    return n + ((await this.x.pool.query(SQL.sweepAcks, [SWEEP_BATCH])).rowCount ?? 0);
  }
}
