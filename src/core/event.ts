/**
 * Device status events. Identity is (tenant, device, boot, sequence).
 * The rule below is the whole decision; each store applies it in one atomic
 * step together with the seen-marker, the device state and the notification.
 *
 * - an identity applied within the retention window → duplicate, nothing changes
 * - the current boot, a higher sequence → applied (a forward jump reports the gap)
 * - the current boot, a lower sequence never applied → rejected / stale_sequence
 * - a boot seen before but not current → rejected / stale_boot
 * - a boot never seen → a new epoch, applied
 * Duplicates are diagnostic; gaps (missing sequences) and stale devices page.
 */
export interface DeviceEvent {
  tenant: string;
  device: string;
  boot: string;
  sequence: number;
  state: string;
  /** producer's observation time, ms */
  observedAt: number;
}

/** A device's state is its last applied event. */
export type DeviceState = DeviceEvent;

export type RejectReason = 'stale_sequence' | 'stale_boot';
export const EVENT_REJECT_REASONS: readonly RejectReason[] = ['stale_sequence', 'stale_boot'];

export interface Gap {
  from: number;
  to: number;
}

export interface Transition {
  from: string;
  to: string;
}

export type EventOutcome =
  | { outcome: 'applied'; reason: null; gap: Gap | null; transition: Transition | null }
  | { outcome: 'duplicate'; reason: null; gap: null; transition: null }
  | { outcome: 'rejected'; reason: RejectReason; gap: null; transition: null };

export const DUPLICATE: EventOutcome = { outcome: 'duplicate', reason: null, gap: null, transition: null };

export function rejected(reason: RejectReason): EventOutcome {
  return { outcome: 'rejected', reason, gap: null, transition: null };
}

/**
 * Decides an event that is not a duplicate. `bootSeen` says whether the
 * event's boot was seen before for this device.
 */
export function decideEvent(current: DeviceState | null, bootSeen: boolean, e: DeviceEvent): { result: EventOutcome; next: DeviceState | null } {
  const next: DeviceState = { ...e };
  const transition = current && current.state !== e.state ? { from: current.state, to: e.state } : null;
  if (current === null) {
    return { result: { outcome: 'applied', reason: null, gap: null, transition: null }, next };
  }
  if (current.boot === e.boot) {
    if (e.sequence <= current.sequence) return { result: rejected('stale_sequence'), next: null };
    const gap = e.sequence > current.sequence + 1 ? { from: current.sequence + 1, to: e.sequence - 1 } : null;
    return { result: { outcome: 'applied', reason: null, gap, transition }, next };
  }
  if (bootSeen) return { result: rejected('stale_boot'), next: null };
  return { result: { outcome: 'applied', reason: null, gap: null, transition }, next };
}

/** Missing sequences in a gap. */
export function gapSize(g: Gap | null): number {
  return g ? g.to - g.from + 1 : 0;
}
