import {
  type AckOutcome,
  type ReconcileOutcome,
  type SharedStore,
  type DeviceSummary,
  DEFAULT_EXPIRED_GRACE_MS,
  RESOLUTION_MEMORY_MS,
  staleResult,
  type DedupStore,
  type IncidentClaim,
  type IncidentDecisionResult,
  type IncidentRecord,
} from '../contract.js';
import type { ClaimOutcome } from '../../core/decision.js';
import type { RedisConnection } from './connection.js';
import { ackMarkerKey, allShards, lp, resolutionKey, unLp, deliveryKeys, deviceKeys, failingKey, incidentRecordKey, outboxKeyFor, reconcileMarkerKey, shardOf, windowKey } from './keys.js';
import { RedisDeliveries } from './redis-deliveries.js';
import type { WindowClaim } from '../delivery-contract.js';
import type { DeviceEvent, DeviceState, EventOutcome, RejectReason } from '../../core/event.js';
import type { OutboxEntry, OutboxPayload } from '../contract.js';

/** ARGV for an optional outbox entry: the flag, then tenant, key, severity, summary, data. */
const outboxArgs = (tenant: string, key: string, p: OutboxPayload | undefined) =>
  p ? ['1', tenant, key, p.severity, p.summary, JSON.stringify(p.data)] : ['', tenant, key, '', '', ''];
import { scripts } from './scripts.js';

export interface RedisStoreOptions {
  expiredGraceMs?: number;
  /** How long a reconcile marker outlives its replay (a crashed replay must re-run within it). */
  reconcileMarkerMs?: number;
}

export type { ReconcileOutcome } from '../contract.js';

/** Text for a SCAN MATCH pattern, with glob's special characters escaped. */
const globLiteral = (t: string) => t.replace(/[*?[\]\\]/g, (c) => `\\${c}`);

/** "createdAt,lastSeenDelta,ttl,refires,updates,fingerprint", as the Lua scripts write it. */
function parseRecord(tenant: string, key: string, value: string): IncidentRecord {
  const m = /^(\d+),(\d+),(\d+),(\d+),(\d+),(.*)$/s.exec(value);
  if (!m) throw new Error(`malformed incident record at ${key}: ${JSON.stringify(value)}`);
  const [createdAt, delta, ttl, refires, updates] = m.slice(1, 6).map(Number) as [number, number, number, number, number];
  const lastSeenAt = createdAt + delta;
  return { tenant, key, fingerprint: m[6]!, createdAt, lastSeenAt, refires, updates, expiresAt: lastSeenAt + ttl };
}

/**
 * Shared store for active-active replicas. Every operation is ONE Lua script,
 * one round trip, on the server's clock; TTLs are Redis's own PX expiries.
 */
export class RedisStore implements SharedStore {
  readonly kind: string;
  private readonly graceMs: number;
  private readonly markerMs: number;
  readonly deliveries: RedisDeliveries;

  constructor(
    readonly conn: RedisConnection,
    kind: 'redis' | 'redis-cluster' = 'redis',
    options: RedisStoreOptions = {},
  ) {
    this.kind = kind;
    this.graceMs = options.expiredGraceMs ?? DEFAULT_EXPIRED_GRACE_MS;
    this.markerMs = options.reconcileMarkerMs ?? 86_400_000;
    this.deliveries = new RedisDeliveries(conn);
  }


  async decideIncident(claim: IncidentClaim): Promise<IncidentDecisionResult> {
    const k = deliveryKeys(shardOf(claim.tenant, claim.key));
    const reply = (await this.conn.evalScript(
      scripts.decideIncident,
      [incidentRecordKey(claim.tenant, claim.key), k.outbox, failingKey('incident', claim.tenant, claim.key), k.due, resolutionKey(claim.tenant, claim.key)],
      [claim.fingerprint, claim.ttlMs, this.graceMs, ...outboxArgs(claim.tenant, claim.key, claim.outbox), k.tag, claim.episodeStartedAt ?? ''],
    )) as [string, number, number, number, number, string, number];
    const [kind, now, createdAt, refires, updates, previousFingerprint, previousUpdates] = reply;
    if (kind === 'stale') {
      const live = await this.getIncident(claim.tenant, claim.key);
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

  async getIncident(tenant: string, key: string) {
    const reply = (await this.conn.evalScript(scripts.getIncident, [incidentRecordKey(tenant, key)], [])) as
      | [number, string]
      | null;
    return reply ? parseRecord(tenant, key, reply[1]) : null;
  }

  async closeIncident(tenant: string, key: string, resolvedAt?: number) {
    const reply = (await this.conn.evalScript(
      scripts.closeIncident,
      [incidentRecordKey(tenant, key), outboxKeyFor(tenant, key), resolutionKey(tenant, key)],
      [tenant, key, resolvedAt ?? '', RESOLUTION_MEMORY_MS],
    )) as
      | [number, string]
      | null;
    return reply ? parseRecord(tenant, key, reply[1]) : null;
  }

  async acknowledgeIncident(tenant: string, key: string) {
    return (await this.conn.evalScript(
      scripts.acknowledgeIncident,
      [incidentRecordKey(tenant, key), outboxKeyFor(tenant, key), ackMarkerKey(tenant, key)],
      [tenant, key, 7 * 86_400_000],
    )) as AckOutcome;
  }

  async applyEvent(e: DeviceEvent, retentionMs: number): Promise<EventOutcome> {
    const k = deviceKeys(e.tenant, e.device, e.boot, e.sequence);
    const [outcome, reason, gapFrom, gapTo, from, to] = (await this.conn.evalScript(
      scripts.applyEvent,
      [k.device, k.seen, k.boots, k.outbox, k.freshness],
      [e.tenant, e.device, e.boot, e.sequence, e.state, e.observedAt, retentionMs, k.member, new Date(e.observedAt).toISOString()],
    )) as [string, string, number, number, string, string];
    if (outcome === 'duplicate') return { outcome, reason: null, gap: null, transition: null };
    if (outcome === 'rejected') return { outcome, reason: reason as RejectReason, gap: null, transition: null };
    return {
      outcome: 'applied',
      reason: null,
      gap: Number(gapFrom) >= 0 ? { from: Number(gapFrom), to: Number(gapTo) } : null,
      transition: from ? { from, to } : null,
    };
  }

  /** SET NX PX and the outbox entry (or a repeat's re-queue), in one script on the server's clock. */
  async claimWindow(tenant: string, key: string, ttlMs: number, outbox?: OutboxPayload): Promise<WindowClaim> {
    const k = deliveryKeys(shardOf(tenant, key));
    const reply = Number(
      await this.conn.evalScript(
        scripts.claimWindow,
        [windowKey(tenant, key), outboxKeyFor(tenant, key), failingKey('violation', tenant, key), k.due],
        [ttlMs, ...outboxArgs(tenant, key, outbox), k.tag],
      ),
    );
    return reply === 1 ? 'claimed' : reply === 2 ? 'requeued' : 'repeat';
  }

  async getDevice(tenant: string, device: string): Promise<DeviceState | null> {
    const k = deviceKeys(tenant, device, '', 0);
    const [boot, seq, state, obs] = (await this.conn.send(k.device, ['HMGET', k.device, 'boot', 'seq', 'state', 'obs'])) as Array<
      string | null
    >;
    if (boot == null) return null;
    return { tenant, device, boot, sequence: Number(seq), state: state!, observedAt: Number(obs) };
  }

  /** Device keys are `{tag}:d:` + length-prefixed tenant and device: SCAN for them, read each. */
  async listDevices(tenant: string | null, limit: number): Promise<DeviceSummary[]> {
    const keys = await this.conn.scan(`{oo:*}:d:${tenant === null ? '' : globLiteral(lp(tenant))}*`, limit * 2);
    const devices = await Promise.all(
      keys.map(async (k): Promise<DeviceSummary | null> => {
        const ids = unLp(k.slice(k.indexOf(':d:') + 3));
        if (!ids || ids.length !== 2) return null;
        const [boot, seq, state, obs, gaps] = (await this.conn.send(k, ['HMGET', k, 'boot', 'seq', 'state', 'obs', 'gaps'])) as Array<string | null>;
        if (boot == null) return null;
        return { tenant: ids[0]!, device: ids[1]!, boot, sequence: Number(seq), state: state!, observedAt: Number(obs), gaps: Number(gaps ?? 0) };
      }),
    );
    return devices
      .filter((d): d is DeviceSummary => d !== null)
      .sort((a, b) => a.observedAt - b.observedAt)
      .slice(0, limit);
  }

  async countStaleDevices(observedBefore: number): Promise<number> {
    const counts = await Promise.all(
      allShards('f').map((key) => this.conn.send(key, ['ZCOUNT', key, '-inf', `(${observedBefore}`])),
    );
    return counts.reduce<number>((a, b) => a + Number(b), 0);
  }

  /** Every shard's outbox stream, oldest first within a shard, then ordered by time across shards. */
  async listOutbox(): Promise<OutboxEntry[]> {
    const streams = await Promise.all(allShards('o').map((key) => this.conn.send(key, ['XRANGE', key, '-', '+'])));
    const out: OutboxEntry[] = [];
    for (const entries of streams as Array<Array<[string, string[]]>>) {
      for (const [, fields] of entries) {
        const f: Record<string, string> = {};
        for (let i = 0; i < fields.length; i += 2) f[fields[i]!] = fields[i + 1]!;
        out.push({
          tenant: f.tenant!, kind: f.kind as OutboxEntry['kind'], action: f.action as OutboxEntry['action'], key: f.key!,
          severity: f.severity!, summary: f.summary!, data: JSON.parse(f.data!) as Record<string, unknown>, at: Number(f.at),
        });
      }
    }
    return out.sort((a, b) => a.at - b.at);
  }

  /** Replays one journal entry (fail-open); idempotent per journalId. */
  async reconcileIncident(rec: IncidentRecord, ttlMs: number, journalId: string): Promise<ReconcileOutcome> {
    return (await this.conn.evalScript(
      scripts.reconcileIncident,
      [incidentRecordKey(rec.tenant, rec.key), reconcileMarkerKey(rec.tenant, rec.key, journalId)],
      [rec.fingerprint, ttlMs, this.graceMs, rec.refires, rec.updates, this.markerMs],
    )) as ReconcileOutcome;
  }

  async listIncidents(tenant: string, limit: number) {
    const keys = await this.conn.scan(`{oo:*}:i:${globLiteral(tenant)}:*`, limit * 2);
    const prefix = (k: string) => k.indexOf(`:i:${tenant}:`) + `:i:${tenant}:`.length;
    const records = await Promise.all(keys.map((k) => this.getIncident(tenant, k.slice(prefix(k)))));
    return records
      .filter((r): r is IncidentRecord => r !== null)
      .sort((a, b) => b.lastSeenAt - a.lastSeenAt)
      .slice(0, limit);
  }

  /**
   * Records kept in the database: live incidents plus those expired within the
   * grace and the few reconcile markers. Exact counting would need a scan of
   * every key; give onceonly a database of its own and read this as an estimate.
   */
  countLiveIncidents() {
    return this.conn.keyCount();
  }

  /** Redis expires keys itself. */
  async sweepExpired() {
    return 0;
  }

  ping() {
    return this.conn.ping();
  }

  close() {
    return this.conn.close();
  }
}
