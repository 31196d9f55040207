import { decideEvent, type DeviceEvent, type DeviceState, DUPLICATE, type EventOutcome, gapSize } from '../../core/event.js';
import { type DeviceStore, type Origin, outboxEntries, SWEEP_BATCH } from '../contract/index.js';
import { keyLock, type PgDb } from './pg-db.js';
import { transaction } from './pool.js';

export const DEVICE_COLUMNS = `tenant, device, boot, sequence, state, observed_at AS "observedAt"`;

const SQL = {
  seen: `SELECT 1 FROM events_seen WHERE tenant = $1 AND device = $2 AND boot = $3 AND sequence = $4 AND expires_at > $5`,
  device: `SELECT ${DEVICE_COLUMNS} FROM devices WHERE tenant = $1 AND device = $2`,
  bootSeen: `SELECT 1 FROM device_boots WHERE tenant = $1 AND device = $2 AND boot = $3`,
  /** The state, with the gaps this event adds to the device's total. */
  upsertDevice: `
INSERT INTO devices (tenant, device, boot, sequence, state, observed_at, gaps) VALUES ($1, $2, $3, $4, $5, $6, $7)
ON CONFLICT (tenant, device) DO UPDATE SET boot = excluded.boot, sequence = excluded.sequence, state = excluded.state,
  observed_at = excluded.observed_at, gaps = devices.gaps + excluded.gaps`,
  addBoot: `INSERT INTO device_boots (tenant, device, boot) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`,
  /** A marker that expired but was not swept yet is simply renewed. */
  markSeen: `
INSERT INTO events_seen (tenant, device, boot, sequence, expires_at) VALUES ($1, $2, $3, $4, $5)
ON CONFLICT (tenant, device, boot, sequence) DO UPDATE SET expires_at = excluded.expires_at`,
  sweepSeen: `
DELETE FROM events_seen WHERE (tenant, device, boot, sequence) IN (
  SELECT tenant, device, boot, sequence FROM events_seen WHERE expires_at <= $1 LIMIT $2)`,
};

/** Device events in Postgres: one transaction per event, under the device's advisory lock. */
export class PgDevices implements DeviceStore {
  constructor(private readonly x: PgDb) {}

  apply(e: DeviceEvent, retentionMs: number, origin?: Origin): Promise<EventOutcome> {
    return transaction(this.x.pool, keyLock(e.tenant, `device:${e.device}`), async (c) => {
      const now = this.x.clock.now();
      const identity = `${e.device}/${e.boot}/${e.sequence}`;
      if ((await c.query(SQL.seen, [e.tenant, e.device, e.boot, e.sequence, now])).rowCount) {
        await this.x.audit(c, 'events', { tenant: e.tenant, key: identity, decision: 'duplicate', reason: '' }, now, origin);
        return DUPLICATE;
      }
      const current = (await c.query<DeviceState>(SQL.device, [e.tenant, e.device])).rows[0] ?? null;
      const bootSeen = Boolean((await c.query(SQL.bootSeen, [e.tenant, e.device, e.boot])).rowCount);
      const { result, next } = decideEvent(current, bootSeen, e);
      if (next) {
        await c.query(SQL.upsertDevice, [next.tenant, next.device, next.boot, next.sequence, next.state, next.observedAt, gapSize(result.gap)]);
        await c.query(SQL.addBoot, [e.tenant, e.device, e.boot]);
        await c.query(SQL.markSeen, [e.tenant, e.device, e.boot, e.sequence, now + retentionMs]);
        if (result.transition) await this.x.append(c, outboxEntries.transition(e, result.transition, now));
      }
      await this.x.audit(c, 'events', { tenant: e.tenant, key: identity, decision: result.outcome, reason: result.reason ?? '' }, now, origin);
      return result;
    });
  }

  async get(tenant: string, device: string) {
    return (await this.x.pool.query<DeviceState>(SQL.device, [tenant, device])).rows[0] ?? null;
  }

  async sweep(): Promise<number> {
    return (await this.x.pool.query(SQL.sweepSeen, [this.x.clock.now(), SWEEP_BATCH])).rowCount ?? 0;
  }
}
