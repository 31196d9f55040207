import { type DeviceEvent, type DeviceState, DUPLICATE, type EventOutcome, type RejectReason, rejected } from '../../core/event.js';
import { type DeviceStore, type Origin, SWEEP_BATCH } from '../contract/index.js';
import { keyLock, type PgDb } from './pg-db.js';
import { encodeRoute } from '../../core/outbox.js';

export const DEVICE_COLUMNS = `tenant, device, boot, sequence, state, observed_at AS "observedAt"`;

const SQL = {
  apply: `SELECT outcome, reason, gap_from AS "gapFrom", gap_to AS "gapTo", from_state AS "fromState"
  FROM oo_apply_event($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)`,
  device: `SELECT ${DEVICE_COLUMNS} FROM devices WHERE tenant = $1 AND device = $2`,
  sweepSeen: `
DELETE FROM events_seen WHERE (tenant, device, boot, sequence) IN (
  SELECT tenant, device, boot, sequence FROM events_seen WHERE expires_at <= $1 LIMIT $2)`,
};

interface ApplyRow {
  outcome: EventOutcome['outcome'];
  reason: RejectReason | null;
  gapFrom: number | null;
  gapTo: number | null;
  fromState: string | null;
}

/** Device events in Postgres: one function call per event, under the device's advisory lock. */
export class PgDevices implements DeviceStore {
  constructor(private readonly x: PgDb) {}

  /** One round trip: oo_apply_event (migration 006) decides under the device's lock, as decideEvent does. */
  async apply(e: DeviceEvent, retentionMs: number, origin?: Origin, route?: readonly string[]): Promise<EventOutcome> {
    const { rows } = await this.x.pool.query<ApplyRow>(SQL.apply, [
      keyLock(e.tenant, `device:${e.device}`),
      e.tenant,
      e.device,
      e.boot,
      e.sequence,
      e.state,
      e.observedAt,
      new Date(e.observedAt).toISOString(),
      retentionMs,
      this.x.clock.now(),
      ...this.x.auditArgs('events', origin),
      encodeRoute(route),
    ]);
    const r = rows[0]!;
    if (r.outcome === 'duplicate') return DUPLICATE;
    if (r.outcome === 'rejected') return rejected(r.reason!);
    return {
      outcome: 'applied',
      reason: null,
      gap: r.gapFrom === null ? null : { from: r.gapFrom, to: r.gapTo! },
      transition: r.fromState === null ? null : { from: r.fromState, to: e.state },
    };
  }

  async get(tenant: string, device: string) {
    return (await this.x.pool.query<DeviceState>(SQL.device, [tenant, device])).rows[0] ?? null;
  }

  async sweep(): Promise<number> {
    return (await this.x.pool.query(SQL.sweepSeen, [this.x.clock.now(), SWEEP_BATCH])).rowCount ?? 0;
  }
}
