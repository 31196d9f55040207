import { entryOfStored, type StoredEntry } from '../../core/outbox.js';
import { type DeviceSummary, incidentOfRow, type IncidentRow, type OutboxEntry, type QueryStore } from '../contract/index.js';
import type { SqliteDb } from './sqlite-db.js';
import { INCIDENT_COLUMNS } from './sqlite-incidents.js';

const SQL = {
  /** in: tenant, now, limit. */
  listIncidents: `SELECT ${INCIDENT_COLUMNS} FROM incidents WHERE tenant = ? AND expires_at > ? ORDER BY last_seen_at DESC LIMIT ?`,
  /** in: now. */
  countLive: `SELECT count(*) AS n FROM incidents WHERE expires_at > ?`,
  /** in: tenant or null (all), limit. Least recently observed first, with the device's gaps. */
  listDevices: `
SELECT d.tenant, d.device, d.boot, d.sequence, d.state, d.observed_at AS observedAt, coalesce(g.gaps, 0) AS gaps
  FROM devices d LEFT JOIN device_gaps g ON g.tenant = d.tenant AND g.device = d.device
 WHERE (@tenant IS NULL OR d.tenant = @tenant) ORDER BY d.observed_at LIMIT @limit`,
  /** in: observedBefore. */
  countStale: `SELECT count(*) AS n FROM devices WHERE observed_at < ?`,
  listOutbox: `SELECT tenant, kind, action, key, severity, summary, data, at, route FROM outbox ORDER BY id`,
};

/** Lists and counts, read outside any write transaction (WAL readers never wait on the writer). */
export class SqliteQueries implements QueryStore {
  private readonly s;

  constructor(private readonly x: SqliteDb) {
    const db = x.db;
    this.s = {
      listIncidents: db.prepare<[string, number, number], IncidentRow>(SQL.listIncidents),
      countLive: db.prepare<[number], { n: number }>(SQL.countLive),
      listDevices: db.prepare<[{ tenant: string | null; limit: number }], DeviceSummary>(SQL.listDevices),
      countStale: db.prepare<[number], { n: number }>(SQL.countStale),
      listOutbox: db.prepare<[], StoredEntry>(SQL.listOutbox),
    };
  }

  async listIncidents(tenant: string, limit: number) {
    return this.s.listIncidents.all(tenant, this.x.clock.now(), limit).map(incidentOfRow);
  }

  async countLiveIncidents() {
    return this.s.countLive.get(this.x.clock.now())?.n ?? 0;
  }

  async listDevices(tenant: string | null, limit: number) {
    return this.s.listDevices.all({ tenant, limit });
  }

  async countStaleDevices(observedBefore: number) {
    return this.s.countStale.get(observedBefore)?.n ?? 0;
  }

  async listOutbox(): Promise<OutboxEntry[]> {
    return this.s.listOutbox.all().map(entryOfStored);
  }
}
