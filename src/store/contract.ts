import type { ClaimOutcome } from '../core/decision.js';
import type { DeviceEvent, DeviceState, EventOutcome } from '../core/event.js';

/** A device transition waiting to be delivered (the outbox, until delivery drains it). */
export interface Notification {
  tenant: string;
  device: string;
  boot: string;
  sequence: number;
  from: string;
  to: string;
  observedAt: number;
}

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
}

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

  /**
   * Claim the key if absent (or expired); else compare the fingerprint, store
   * the new one, slide the TTL and count the re-fire: all in one atomic step.
   */
  decideIncident(claim: IncidentClaim): Promise<IncidentDecisionResult>;
  /** The live record, or null when absent or expired. */
  getIncident(tenant: string, key: string): Promise<IncidentRecord | null>;
  /** Close (delete) a live incident; returns its last record, or null when it was not live. */
  closeIncident(tenant: string, key: string): Promise<IncidentRecord | null>;
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
  /** Devices whose last applied observation is older than `observedBefore` (ms). */
  countStaleDevices(observedBefore: number): Promise<number>;
  /** Notifications recorded and not yet delivered, oldest first. */
  listNotifications(): Promise<Notification[]>;

  /**
   * Windowed claim (SPC violations): true for the first claim of the key while
   * it is live (ttlMs), false for every repeat. One atomic step.
   */
  claimWindow(tenant: string, key: string, ttlMs: number): Promise<boolean>;

  /** Throws when the store cannot serve. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

/** The pure rule every backend applies inside its atomic step. */
export function nextIncidentRecord(
  /** the stored record, live or expired within the grace */
  existing: IncidentRecord | null,
  claim: IncidentClaim,
  now: number,
): IncidentDecisionResult {
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
