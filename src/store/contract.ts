import type { ClaimOutcome } from '../core/decision.js';
import type { DeviceEvent, DeviceState, EventOutcome, Transition } from '../core/event.js';
import { incidentAction, severityOfFingerprint, type OutboxEntry, type OutboxPayload } from '../core/outbox.js';
import type { DeliveryStore, WindowClaim } from './delivery-contract.js';

export type { OutboxEntry, OutboxPayload, WindowClaim };

/**
 * The DedupStore contract. Operations are semantic (decide, close), never raw
 * commands, and each one is ONE atomic step in its backend: no check-then-act
 * across round trips. Times are milliseconds since the epoch from the store's
 * own clock (injected for embedded stores; the server's for remote ones).
 */

export interface IncidentRecord {
  tenant: string;
  key: string;
  fingerprint: string;
  createdAt: number;
  lastSeenAt: number;
  /** every arrival after the CREATE */
  refires: number;
  /** the arrivals that were UPDATEs */
  updates: number;
  expiresAt: number;
}

export interface IncidentClaim {
  tenant: string;
  key: string;
  fingerprint: string;
  /** sliding TTL: every arrival sets expiry to now + ttlMs */
  ttlMs: number;
  /** written to the outbox in the same step when the decision is a CREATE or an UPDATE */
  outbox?: OutboxPayload;
  /**
   * Alerts with episodes (Alertmanager): when the episode started (ms). If the
   * key's recorded resolution ended at or after it, the claim belongs to a
   * closed episode: outcome `stale`, nothing changes.
   */
  episodeStartedAt?: number;
}

/** How long a resolution is remembered, to recognise a late firing of the episode it closed. */
export const RESOLUTION_MEMORY_MS = 86_400_000;

/** A device as the dashboard lists it: its state and how many sequence numbers it has been missing in all. */
export type DeviceSummary = DeviceState & { gaps: number };

/** Which inputs are in ledger mode (retention: forever): their decisions go to the audit trail. */
export interface LedgerInputs {
  incidents: boolean;
  events: boolean;
  violations: boolean;
}

/** What a store that keeps an audit trail (Postgres) needs to write it. */
export interface Ledger {
  inputs: () => LedgerInputs;
  /** for the SUPPRESS reason (lost_race or unchanged), as the engine decides it */
  raceWindowMs: () => number;
  /** which replica decided */
  replica: string;
}

export interface AuditRow {
  at: number;
  kind: keyof LedgerInputs;
  key: string;
  decision: string;
  reason: string;
  replica: string;
  requestId: string;
}

/** A journal entry's replay: it stood (`claimed`), was a provisional duplicate (`merged`), or was replayed before (`done`). */
export type ReconcileOutcome = 'claimed' | 'merged' | 'done';

/**
 * A store several replicas share (Redis, Postgres): what fail-open needs
 * beyond the contract. Replaying one journal entry is idempotent per journalId.
 */
export interface SharedStore extends DedupStore {
  reconcileIncident(rec: IncidentRecord, ttlMs: number, journalId: string): Promise<ReconcileOutcome>;
}

export type AckOutcome = 'acknowledged' | 'repeat' | 'absent';

export interface IncidentDecisionResult {
  outcome: ClaimOutcome;
  record: IncidentRecord;
  /** Decided by the fail-open journal because the shared store was unreachable. */
  provisional?: boolean;
}

/**
 * How long an expired record that was never closed is kept, so that the next
 * arrival can be told apart as a premature expiry (`CREATE/expired`).
 */
export const DEFAULT_EXPIRED_GRACE_MS = 600_000;

export interface DedupStore {
  /** `memory`, `sqlite`, … : for logs and metrics. */
  readonly kind: string;
  /** Delivery state, kept beside the decisions and the outbox they write. */
  readonly deliveries: DeliveryStore;

  /**
   * Claim the key if absent (or expired); else compare the fingerprint, store
   * the new one, slide the TTL, count the re-fire and re-queue the key's
   * failing deliveries: all in one atomic step.
   */
  decideIncident(claim: IncidentClaim): Promise<IncidentDecisionResult>;
  /** The live record, or null when absent or expired. */
  getIncident(tenant: string, key: string): Promise<IncidentRecord | null>;
  /**
   * Close (delete) a live incident, writing a `close` outbox entry in the same
   * step; returns its last record, or null when it was not live. With
   * `resolvedAt` (an alert's episode end, ms) the key's resolution is recorded
   * too (the later of the two when one is already recorded), live or not.
   */
  closeIncident(tenant: string, key: string, resolvedAt?: number): Promise<IncidentRecord | null>;
  /**
   * The first acknowledgement of a live incident's episode writes an `update`
   * outbox entry; a repeat, or a key that is not live, changes nothing. One
   * atomic step.
   */
  acknowledgeIncident(tenant: string, key: string): Promise<AckOutcome>;
  /**
   * Up to `limit` live incidents of a tenant, most recently seen first (for
   * the dashboard and `onceonly incidents list`). On Redis they are found by
   * SCAN: the first `limit` found, ordered among themselves.
   */
  listIncidents(tenant: string, limit: number): Promise<IncidentRecord[]>;
  /** Live (unexpired) incidents across tenants. */
  countLiveIncidents(): Promise<number>;
  /** Delete records expired for longer than the grace, a bounded batch at a time; returns how many went. */
  sweepExpired(): Promise<number>;
  /**
   * Device events: the seen-marker (kept for retentionMs), the device state,
   * the boots seen and a transition's notification, in ONE atomic step.
   */
  applyEvent(event: DeviceEvent, retentionMs: number): Promise<EventOutcome>;
  getDevice(tenant: string, device: string): Promise<DeviceState | null>;
  /**
   * Up to `limit` devices of a tenant (null: of every tenant, for a server
   * without tenants, whose events may name any tenant_id), least recently
   * observed first (stale ones lead). On Redis: the first found by SCAN.
   */
  listDevices(tenant: string | null, limit: number): Promise<DeviceSummary[]>;
  /** Devices whose last applied observation is older than `observedBefore` (ms). */
  countStaleDevices(observedBefore: number): Promise<number>;
  /** Outbox entries written and not yet fanned out to deliveries, oldest first (per shard on Redis, then by time). */
  listOutbox(): Promise<OutboxEntry[]>;

  /**
   * Windowed claim (SPC violations): `claimed` for the first claim of the key
   * while it is live (ttlMs), `repeat` for a repeat, `requeued` for a repeat
   * that found failing deliveries of the key (retrying or dead) and put them
   * back in the queue, due now, instead of suppressing. One atomic step, which
   * also writes a `create` outbox entry when it claimed and `outbox` is given.
   */
  claimWindow(tenant: string, key: string, ttlMs: number, outbox?: OutboxPayload): Promise<WindowClaim>;

  /** A key's audit trail, oldest first; only stores that keep one (Postgres in ledger mode) have it. */
  auditTrail?(tenant: string, key: string, limit: number): Promise<AuditRow[]>;
  /** Prepares the store before first use (Postgres: applies migrations); optional. */
  init?(): Promise<void>;
  /** Throws when the store cannot serve. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

/**
 * Whether a claim belongs to an episode already resolved: `endedAt` is the
 * key's recorded resolution (or null). Checked inside the claim's own step.
 */
export function isStale(claim: IncidentClaim, endedAt: number | null): boolean {
  return claim.episodeStartedAt !== undefined && endedAt !== null && endedAt >= claim.episodeStartedAt;
}

/** A stale claim's result: nothing changed; the record is the live one, or an unstored one that is not live. */
export function staleResult(live: IncidentRecord | null, claim: IncidentClaim, now: number): IncidentDecisionResult {
  return {
    outcome: { kind: 'stale' },
    record: live ?? { tenant: claim.tenant, key: claim.key, fingerprint: claim.fingerprint, createdAt: now, lastSeenAt: now, refires: 0, updates: 0, expiresAt: now },
  };
}

/** The pure rule every backend applies inside its atomic step. */
export function nextIncidentRecord(
  /** the stored record, live or expired within the grace */
  existing: IncidentRecord | null,
  claim: IncidentClaim,
  now: number,
): IncidentDecisionResult & { outcome: Exclude<ClaimOutcome, { kind: 'stale' }> } {
  const expiresAt = now + claim.ttlMs;
  if (existing === null || existing.expiresAt <= now) {
    return {
      outcome: existing ? { kind: 'created', expired: { updates: existing.updates } } : { kind: 'created' },
      record: {
        tenant: claim.tenant,
        key: claim.key,
        fingerprint: claim.fingerprint,
        createdAt: now,
        lastSeenAt: now,
        refires: 0,
        updates: 0,
        expiresAt,
      },
    };
  }
  const changed = existing.fingerprint !== claim.fingerprint;
  return {
    outcome: changed
      ? { kind: 'changed', previousFingerprint: existing.fingerprint, fingerprint: claim.fingerprint }
      : { kind: 'unchanged', createdAt: existing.createdAt, now },
    record: {
      ...existing,
      fingerprint: claim.fingerprint,
      lastSeenAt: now,
      refires: existing.refires + 1,
      updates: existing.updates + (changed ? 1 : 0),
      expiresAt,
    },
  };
}

/** The outbox entries each store writes, built once here so every backend writes the same. */
export const outboxEntries = {
  incident(claim: IncidentClaim, outcomeKind: 'created' | 'unchanged' | 'changed', at: number): OutboxEntry | null {
    const action = incidentAction(outcomeKind);
    if (!action || !claim.outbox) return null;
    return { tenant: claim.tenant, kind: 'incident', action, key: claim.key, ...claim.outbox, at };
  },
  acknowledged(rec: IncidentRecord, at: number): OutboxEntry {
    return {
      tenant: rec.tenant, kind: 'incident', action: 'update', key: rec.key,
      severity: severityOfFingerprint(rec.fingerprint), summary: 'acknowledged', data: { fingerprint: rec.fingerprint, acknowledged: true }, at,
    };
  },
  close(rec: IncidentRecord, at: number): OutboxEntry {
    return {
      tenant: rec.tenant, kind: 'incident', action: 'close', key: rec.key,
      severity: severityOfFingerprint(rec.fingerprint), summary: '', data: { fingerprint: rec.fingerprint }, at,
    };
  },
  violation(tenant: string, key: string, payload: OutboxPayload, at: number): OutboxEntry {
    return { tenant, kind: 'violation', action: 'create', key, ...payload, at };
  },
  transition(e: DeviceEvent, t: Transition, at: number): OutboxEntry {
    return {
      tenant: e.tenant, kind: 'event', action: 'notify', key: e.device, severity: 'INFO',
      summary: `${e.device}: ${t.from} → ${t.to}`,
      data: { device_id: e.device, boot_id: e.boot, sequence: e.sequence, from: t.from, to: t.to, observed_at: new Date(e.observedAt).toISOString() },
      at,
    };
  },
};
