import type { Clock } from '../core/clock.js';
import type { DeviceEvent, DeviceState, EventOutcome } from '../core/event.js';
import { FOREVER_MS, type Config } from '../config/schema.js';
import { parseEvent } from '../inputs/event/schema.js';
import type { DedupStore, Origin } from '../store/contract/index.js';
import { ForbiddenError } from '../access/tenants.js';
import { routeOf } from '../delivery/routing.js';

/** `GET /v1/devices/{tenant}/{device}` as docs/api.md gives it. */
export interface DeviceView {
  tenant_id: string;
  device_id: string;
  boot_id: string;
  sequence: number;
  state: string;
  observed_at: string;
  age_seconds: number;
  stale: boolean;
}

/** Device status events: validate, apply once in the store, account. */
export class EventIngest {
  constructor(
    private readonly store: DedupStore,
    private readonly config: () => Config,
    private readonly clock: Clock,
    private readonly observe: (e: DeviceEvent, o: EventOutcome) => void = () => {},
  ) {}

  /**
   * Validates (throws ValidationError) and applies one event. `tenant`, when
   * tenants are configured, is the caller's: an event for another tenant is
   * refused (ForbiddenError) and changes nothing.
   */
  async apply(body: unknown, tenant?: string, origin?: Origin): Promise<EventOutcome> {
    const e = parseEvent(body);
    if (tenant !== undefined && e.tenant !== tenant) {
      throw new ForbiddenError(`this token belongs to tenant ${JSON.stringify(tenant)}; it cannot send events of tenant ${JSON.stringify(e.tenant)}`);
    }
    const cfg = this.config().events;
    const o = await this.store.devices.apply(e, cfg.retention === 'forever' ? FOREVER_MS : cfg.retention_seconds * 1000, origin, this.route(e));
    this.observe(e, o);
    return o;
  }

  /**
   * Where a transition of this event would go: routed by the event's labels
   * (`device_id`, `state`, `boot_id`, `sequence`, `kind`, `severity`), decided
   * before its step, so the state it leaves (`from`) is not one of them.
   */
  private route(e: DeviceEvent): readonly string[] | undefined {
    const data = { device_id: e.device, boot_id: e.boot, sequence: e.sequence, to: e.state, observed_at: new Date(e.observedAt).toISOString() };
    return routeOf(this.config(), e.tenant, { kind: 'event', key: e.device, severity: 'INFO', data });
  }

  async device(tenant: string, device: string): Promise<DeviceView | null> {
    const d = await this.store.devices.get(tenant, device);
    return d ? this.view(d) : null;
  }

  /** A tenant's devices (null: all tenants'), least recently observed (so stale) first. */
  async devices(tenant: string | null, limit: number): Promise<Array<DeviceView & { gaps: number }>> {
    return (await this.store.queries.listDevices(tenant, limit)).map((d) => ({ ...this.view(d), gaps: d.gaps }));
  }

  private view(d: DeviceState): DeviceView {
    const age = Math.max(0, (this.clock.now() - d.observedAt) / 1000);
    return {
      tenant_id: d.tenant,
      device_id: d.device,
      boot_id: d.boot,
      sequence: d.sequence,
      state: d.state,
      observed_at: new Date(d.observedAt).toISOString(),
      age_seconds: Math.round(age * 1000) / 1000,
      stale: age > this.config().events.stale_after_seconds,
    };
  }

  /** Devices stale now, by the config in force. */
  staleDevices(): Promise<number> {
    return this.store.queries.countStaleDevices(this.clock.now() - this.config().events.stale_after_seconds * 1000);
  }
}
