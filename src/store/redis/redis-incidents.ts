import type { ClaimOutcome } from '../../core/decision.js';
import type { OutboxPayload } from '../../core/outbox.js';
import {
  ACK_MEMORY_MS,
  type AckOutcome,
  DEFAULT_EXPIRED_GRACE_MS,
  type IncidentClaim,
  type IncidentDecisionResult,
  type IncidentRecord,
  RECONCILE_MARKER_MS,
  type ReconcileOutcome,
  RESOLUTION_MEMORY_MS,
  type SharedIncidentStore,
  staleResult,
} from '../contract/index.js';
import type { RedisConnection } from './connection.js';
import { ackMarkerKey, deliveryKeys, failingKey, incidentRecordKey, outboxKeyFor, reconcileMarkerKey, resolutionKey, shardOf } from './keys.js';
import { scripts } from './scripts.js';

/** ARGV for an optional outbox entry: the flag, then tenant, key, severity, summary, data. */
export const outboxArgs = (tenant: string, key: string, p: OutboxPayload | undefined) =>
  p ? ['1', tenant, key, p.severity, p.summary, JSON.stringify(p.data)] : ['', tenant, key, '', '', ''];

/** "createdAt,lastSeenDelta,ttl,refires,updates,fingerprint", as the Lua scripts write it. */
function parseRecord(tenant: string, key: string, value: string): IncidentRecord {
  const m = /^(\d+),(\d+),(\d+),(\d+),(\d+),(.*)$/s.exec(value);
  if (!m) throw new Error(`malformed incident record at ${key}: ${JSON.stringify(value)}`);
  const [createdAt, delta, ttl, refires, updates] = m.slice(1, 6).map(Number) as [number, number, number, number, number];
  const lastSeenAt = createdAt + delta;
  return { tenant, key, fingerprint: m[6]!, createdAt, lastSeenAt, refires, updates, expiresAt: lastSeenAt + ttl };
}

/** Incidents on Redis: every operation is ONE Lua script, one round trip, on the server's clock; TTLs are Redis's own PX expiries. */
export class RedisIncidents implements SharedIncidentStore {
  constructor(
    private readonly conn: RedisConnection,
    private readonly graceMs = DEFAULT_EXPIRED_GRACE_MS,
  ) {}

  async decide(claim: IncidentClaim): Promise<IncidentDecisionResult> {
    const k = deliveryKeys(shardOf(claim.tenant, claim.key));
    const reply = (await this.conn.evalScript(
      scripts.decideIncident,
      [incidentRecordKey(claim.tenant, claim.key), k.outbox, failingKey('incident', claim.tenant, claim.key), k.due, resolutionKey(claim.tenant, claim.key)],
      [claim.fingerprint, claim.ttlMs, this.graceMs, ...outboxArgs(claim.tenant, claim.key, claim.outbox), k.tag, claim.episodeStartedAt ?? ''],
    )) as [string, number, number, number, number, string, number];
    const [kind, now, createdAt, refires, updates, previousFingerprint, previousUpdates] = reply;
    if (kind === 'stale') {
      const live = await this.get(claim.tenant, claim.key);
      return staleResult(live, claim, Number(now));
    }
    const outcome: ClaimOutcome =
      kind === 'created'
        ? { kind: 'created' }
        : kind === 'expired'
          ? { kind: 'created', expired: { updates: Number(previousUpdates) } }
          : kind === 'changed'
            ? { kind: 'changed', previousFingerprint, fingerprint: claim.fingerprint }
            : { kind: 'unchanged', createdAt: Number(createdAt), now: Number(now) };
    return {
      outcome,
      record: {
        tenant: claim.tenant,
        key: claim.key,
        fingerprint: claim.fingerprint,
        createdAt: Number(createdAt),
        lastSeenAt: Number(now),
        refires: Number(refires),
        updates: Number(updates),
        expiresAt: Number(now) + claim.ttlMs,
      },
    };
  }

  async get(tenant: string, key: string) {
    const reply = (await this.conn.evalScript(scripts.getIncident, [incidentRecordKey(tenant, key)], [])) as [number, string] | null;
    return reply ? parseRecord(tenant, key, reply[1]) : null;
  }

  async close(tenant: string, key: string, resolvedAt?: number) {
    const reply = (await this.conn.evalScript(
      scripts.closeIncident,
      [incidentRecordKey(tenant, key), outboxKeyFor(tenant, key), resolutionKey(tenant, key)],
      [tenant, key, resolvedAt ?? '', RESOLUTION_MEMORY_MS],
    )) as [number, string] | null;
    return reply ? parseRecord(tenant, key, reply[1]) : null;
  }

  async acknowledge(tenant: string, key: string) {
    return (await this.conn.evalScript(
      scripts.acknowledgeIncident,
      [incidentRecordKey(tenant, key), outboxKeyFor(tenant, key), ackMarkerKey(tenant, key)],
      [tenant, key, ACK_MEMORY_MS],
    )) as AckOutcome;
  }

  /** Replays one journal entry (fail-open); idempotent per journalId. */
  async reconcile(rec: IncidentRecord, ttlMs: number, journalId: string): Promise<ReconcileOutcome> {
    return (await this.conn.evalScript(
      scripts.reconcileIncident,
      [incidentRecordKey(rec.tenant, rec.key), reconcileMarkerKey(rec.tenant, rec.key, journalId)],
      [rec.fingerprint, ttlMs, this.graceMs, rec.refires, rec.updates, RECONCILE_MARKER_MS],
    )) as ReconcileOutcome;
  }
}
