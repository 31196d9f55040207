import type { DeviceEvent, DeviceState, EventOutcome, RejectReason } from '../../core/event.js';
import type { DeviceStore, DeviceSummary, Origin } from '../contract/index.js';
import { encodeRoute } from '../../core/outbox.js';
import type { RedisConnection } from './connection.js';
import { scripts } from './scripts.js';
import { adoptSets } from './adopt-sets.js';
import type { LayoutSeam } from './layout-seam.js';

/** Device events on Redis: `apply` is one Lua script on the device's shard. */
export class RedisDevices implements DeviceStore {
  private readonly conn: RedisConnection;

  constructor(private readonly l: LayoutSeam) {
    this.conn = l.conn;
  }

  /** The device's state key (its state, boots and counter are one record; a read needs no event's keys). */
  private stateKey(tenant: string, device: string) {
    return this.l.at(adoptSets.device(this.l.keys, tenant, device), (l) => l.deviceKeys(tenant, device, '', 0).device);
  }

  async apply(e: DeviceEvent, retentionMs: number, _origin?: Origin, route?: readonly string[]): Promise<EventOutcome> {
    // The device's record and the event's seen-marker (its own record: a repeat stays a duplicate).
    const k = await this.l.at([adoptSets.device(this.l.keys, e.tenant, e.device), adoptSets.seen(e.tenant, e.device, e.boot, e.sequence)], (l) =>
      l.deviceKeys(e.tenant, e.device, e.boot, e.sequence),
    );
    const [outcome, reason, gapFrom, gapTo, from, to] = (await this.conn.evalScript(
      scripts.applyEvent,
      [k.device, k.seen, k.boots, k.outbox, k.freshness],
      [e.tenant, e.device, e.boot, e.sequence, e.state, e.observedAt, retentionMs, k.member, new Date(e.observedAt).toISOString(), encodeRoute(route) ?? ''],
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

  /** The device as a listing shows it (its gaps too), read where the current layout keeps it. */
  async summary(tenant: string, device: string): Promise<DeviceSummary | null> {
    const k = await this.stateKey(tenant, device);
    const [boot, seq, state, obs, gaps] = (await this.conn.send(k, ['HMGET', k, 'boot', 'seq', 'state', 'obs', 'gaps'])) as Array<string | null>;
    if (boot == null) return null;
    return { tenant, device, boot, sequence: Number(seq), state: state!, observedAt: Number(obs), gaps: Number(gaps ?? 0) };
  }

  async get(tenant: string, device: string): Promise<DeviceState | null> {
    const k = await this.stateKey(tenant, device);
    const [boot, seq, state, obs] = (await this.conn.send(k, ['HMGET', k, 'boot', 'seq', 'state', 'obs'])) as Array<string | null>;
    if (boot == null) return null;
    return { tenant, device, boot, sequence: Number(seq), state: state!, observedAt: Number(obs) };
  }
}
