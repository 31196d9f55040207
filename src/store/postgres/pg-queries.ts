import { entryOfStored, type StoredEntry } from '../../core/outbox.js';
import { type DeviceSummary, incidentOfRow, type IncidentRow, type OutboxEntry, type QueryStore } from '../contract/index.js';
import type { PgDb } from './pg-db.js';
import { DEVICE_COLUMNS } from './pg-devices.js';
import { INCIDENT_COLUMNS } from './pg-incidents.js';

const SQL = {
  listIncidents: `SELECT ${INCIDENT_COLUMNS} FROM incidents WHERE tenant = $1 AND expires_at > $2 ORDER BY last_seen_at DESC LIMIT $3`,
  countLive: `SELECT count(*)::int AS n FROM incidents WHERE expires_at > $1`,
  listDevices: `SELECT ${DEVICE_COLUMNS}, gaps FROM devices WHERE ($1::text IS NULL OR tenant = $1) ORDER BY observed_at LIMIT $2`,
  countStale: `SELECT count(*)::int AS n FROM devices WHERE observed_at < $1`,
  listOutbox: `SELECT tenant, kind, action, key, severity, summary, data, at, route FROM outbox ORDER BY id`,
};

/** Lists and counts in Postgres: single statements on the pool, no lock. */
export class PgQueries implements QueryStore {
  constructor(private readonly x: PgDb) {}

  async listIncidents(tenant: string, limit: number) {
    return (await this.x.pool.query<IncidentRow>(SQL.listIncidents, [tenant, this.x.clock.now(), limit])).rows.map(incidentOfRow);
  }

  async countLiveIncidents() {
    return (await this.x.pool.query<{ n: number }>(SQL.countLive, [this.x.clock.now()])).rows[0]!.n;
  }

  async listDevices(tenant: string | null, limit: number) {
    return (await this.x.pool.query<DeviceSummary>(SQL.listDevices, [tenant, limit])).rows;
  }

  async countStaleDevices(observedBefore: number) {
    return (await this.x.pool.query<{ n: number }>(SQL.countStale, [observedBefore])).rows[0]!.n;
  }

  async listOutbox(): Promise<OutboxEntry[]> {
    return (await this.x.pool.query<StoredEntry>(SQL.listOutbox)).rows.map(entryOfStored);
  }

  /** Ledger mode's trail. */
  auditTrail(tenant: string, key: string, limit: number) {
    return this.x.auditTrail(tenant, key, limit);
  }
}
