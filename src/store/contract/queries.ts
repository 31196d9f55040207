import type { OutboxEntry } from '../../core/outbox.js';
import type { DeviceSummary } from './devices.js';
import type { IncidentRecord } from './incidents.js';
import type { AuditRow } from './ledger.js';

/**
 * The queries facet: read-only lists and counts for the dashboard, the
 * operator CLI and metrics. Nothing here decides, so nothing here needs to be
 * atomic with anything else, and fail-open has no local answer for it.
 */
export interface QueryStore {
  /**
   * Up to `limit` live incidents of a tenant, most recently seen first. On
   * Redis they are found by SCAN: the first `limit` found, ordered among
   * themselves.
   */
  listIncidents(tenant: string, limit: number): Promise<IncidentRecord[]>;
  /** Live (unexpired) incidents across tenants. */
  countLiveIncidents(): Promise<number>;
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
  /** A key's audit trail, oldest first; only stores that keep one (Postgres in ledger mode) have it. */
  auditTrail?(tenant: string, key: string, limit: number): Promise<AuditRow[]>;
}
