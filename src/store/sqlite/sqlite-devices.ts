import { decideEvent, type DeviceEvent, type DeviceState, DUPLICATE, gapSize } from '../../core/event.js';
import { type DeviceStore, type Origin, outboxEntries } from '../contract/index.js';
import type { SqliteDb } from './sqlite-db.js';

export const DEVICE_COLUMNS = `tenant, device, boot, sequence, state, observed_at AS observedAt`;

/**
 * `apply` runs these in one BEGIN IMMEDIATE transaction (group commit):
 * seen-marker, device state, boots and the notification commit together or
 * not at all.
 */
const SQL = {
  /** in: tenant, device, boot, sequence, now. A live seen-marker means duplicate. */
  seen: `SELECT 1 FROM events_seen WHERE tenant = ? AND device = ? AND boot = ? AND sequence = ? AND expires_at > ?`,
  /** in: tenant, device. */
  device: `SELECT ${DEVICE_COLUMNS} FROM devices WHERE tenant = ? AND device = ?`,
  /** in: tenant, device, missing sequence numbers. */
  addGaps: `
INSERT INTO device_gaps (tenant, device, gaps) VALUES (?, ?, ?)
ON CONFLICT (tenant, device) DO UPDATE SET gaps = gaps + excluded.gaps`,
  /** in: tenant, device, boot. */
  bootSeen: `SELECT 1 FROM device_boots WHERE tenant = ? AND device = ? AND boot = ?`,
  upsertDevice: `
INSERT INTO devices (tenant, device, boot, sequence, state, observed_at)
VALUES (@tenant, @device, @boot, @sequence, @state, @observedAt)
ON CONFLICT (tenant, device) DO UPDATE SET
  boot = excluded.boot, sequence = excluded.sequence, state = excluded.state, observed_at = excluded.observed_at`,
  addBoot: `INSERT OR IGNORE INTO device_boots (tenant, device, boot) VALUES (?, ?, ?)`,
  /** A marker that expired but was not swept yet is simply renewed. */
  markSeen: `INSERT OR REPLACE INTO events_seen (tenant, device, boot, sequence, expires_at) VALUES (?, ?, ?, ?, ?)`,
  /** in: now, batch. */
  sweepSeen: `
DELETE FROM events_seen WHERE (tenant, device, boot, sequence) IN (
  SELECT tenant, device, boot, sequence FROM events_seen WHERE expires_at <= ? LIMIT ?)`,
};

/** Device events in the SQLite file; every write is one GroupCommit transaction. */
export class SqliteDevices implements DeviceStore {
  private readonly s;

  constructor(private readonly x: SqliteDb) {
    const db = x.db;
    this.s = {
      seen: db.prepare<[string, string, string, number, number]>(SQL.seen),
      device: db.prepare<[string, string], DeviceState>(SQL.device),
      addGaps: db.prepare<[string, string, number]>(SQL.addGaps),
      bootSeen: db.prepare<[string, string, string]>(SQL.bootSeen),
      upsertDevice: db.prepare<[DeviceState]>(SQL.upsertDevice),
      addBoot: db.prepare<[string, string, string]>(SQL.addBoot),
      markSeen: db.prepare<[string, string, string, number, number]>(SQL.markSeen),
      sweepSeen: db.prepare<[number, number]>(SQL.sweepSeen),
    };
  }

  apply(e: DeviceEvent, retentionMs: number, _origin?: Origin, route?: readonly string[]) {
    return this.x.writes.submit(() => {
      const now = this.x.clock.now();
      const s = this.s;
      if (s.seen.get(e.tenant, e.device, e.boot, e.sequence, now)) return DUPLICATE;
      const current = s.device.get(e.tenant, e.device) ?? null;
      const { result, next } = decideEvent(current, Boolean(s.bootSeen.get(e.tenant, e.device, e.boot)), e);
      if (next) {
        s.upsertDevice.run(next);
        s.addBoot.run(e.tenant, e.device, e.boot);
        s.markSeen.run(e.tenant, e.device, e.boot, e.sequence, now + retentionMs);
        if (result.transition) this.x.append(outboxEntries.transition(e, result.transition, now, route));
        if (result.gap) s.addGaps.run(e.tenant, e.device, gapSize(result.gap));
      }
      return result;
    });
  }

  async get(tenant: string, device: string) {
    return this.s.device.get(tenant, device) ?? null;
  }

  /** Inside a sweep's transaction. */
  sweep(batch: number): number {
    return this.s.sweepSeen.run(this.x.clock.now(), batch).changes;
  }
}
