import type { DeviceEvent, DeviceState, EventOutcome } from '../../core/event.js';
import type { Origin } from './ledger.js';

/**
 * The devices facet: device status events applied once, in order. The rule
 * of one event (duplicate, rejected, applied with gap and transition) is the
 * pure `decideEvent` in core; this is the step that applies it atomically.
 */
export interface DeviceStore {
  /**
   * The seen-marker (kept for retentionMs), the device state, the boots seen
   * and a transition's notification, in ONE atomic step. `route`: where the
   * notification goes (absent: every adapter).
   */
  apply(event: DeviceEvent, retentionMs: number, origin?: Origin, route?: readonly string[]): Promise<EventOutcome>;
  get(tenant: string, device: string): Promise<DeviceState | null>;
}

/** A device as the dashboard lists it: its state and how many sequence numbers it has been missing in all. */
export type DeviceSummary = DeviceState & { gaps: number };
