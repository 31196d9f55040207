import type { DeviceEvent, DeviceState, EventOutcome, RejectReason } from '../../core/event.js';
import type { DeviceStore, DeviceSummary } from '../contract/index.js';
import type { RedisConnection } from './connection.js';
import type { KeyLayout } from './keys.js';
import { scripts } from './scripts.js';
import { adoptSets } from './adopt-sets.js';
import type { ShardMigration } from './shard-migration.js';

/** Device events on Redis: `apply` is one Lua script on the device's shard. */
export class RedisDevices implements DeviceStore {
  constructor(
    private readonly conn: RedisConnection,
    private readonly k: KeyLayout,
    private readonly migration: ShardMigration,
  ) {}

  /** While the shard count changes: the device's state and boots and its counter, from the old layout once. */
  private adopt(tenant: string, device: string) {
    return this.migration.ready(adoptSets.device(this.k, tenant, device));
  }

  async apply(e: DeviceEvent, retentionMs: number): Promise<EventOutcome> {
    const count = await this.adopt(e.tenant, e.device);
    await this.migration.ready(adoptSets.seen(e.tenant, e.device, e.boot, e.sequence));
    this.migration.unmoved(count);
    const k = this.k.deviceKeys(e.tenant, e.device, e.boot, e.sequence);
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

  /** The device as a listing shows it (its gaps too), read where the current layout keeps it. */
  async summary(tenant: string, device: string): Promise<DeviceSummary | null> {
    this.migration.unmoved(await this.adopt(tenant, device));
    const k = this.k.deviceKeys(tenant, device, '', 0);
    const [boot, seq, state, obs, gaps] = (await this.conn.send(k.device, ['HMGET', k.device, 'boot', 'seq', 'state', 'obs', 'gaps'])) as Array<string | null>;
    if (boot == null) return null;
    return { tenant, device, boot, sequence: Number(seq), state: state!, observedAt: Number(obs), gaps: Number(gaps ?? 0) };
  }

  async get(tenant: string, device: string): Promise<DeviceState | null> {
    this.migration.unmoved(await this.adopt(tenant, device));
    const k = this.k.deviceKeys(tenant, device, '', 0);
    const [boot, seq, state, obs] = (await this.conn.send(k.device, ['HMGET', k.device, 'boot', 'seq', 'state', 'obs'])) as Array<string | null>;
    if (boot == null) return null;
    return { tenant, device, boot, sequence: Number(seq), state: state!, observedAt: Number(obs) };
  }
}
