import type { Clock } from '../../core/clock.js';
import { decideEvent, DUPLICATE, gapSize, type DeviceEvent, type DeviceState, type EventOutcome } from '../../core/event.js';
import { outboxEntries, type DeviceSummary, type OutboxEntry } from '../contract.js';

/** Device-event state for the memory store; every method runs to completion synchronously. */
export class MemoryEvents {
  private readonly devices = new Map<string, DeviceState>();
  private readonly boots = new Map<string, Set<string>>();
  private readonly seen = new Map<string, number>();
  private readonly gaps = new Map<string, number>();
  constructor(
    private readonly clock: Clock,
    private readonly outbox: OutboxEntry[],
  ) {}

  apply(e: DeviceEvent, retentionMs: number): EventOutcome {
    const now = this.clock.now();
    const dev = `${e.tenant}\u0000${e.device}`;
    const identity = `${dev}\u0000${e.boot}\u0000${e.sequence}`;
    const seenUntil = this.seen.get(identity);
    if (seenUntil !== undefined && seenUntil > now) return DUPLICATE;
    const boots = this.boots.get(dev) ?? new Set<string>();
    const { result, next } = decideEvent(this.devices.get(dev) ?? null, boots.has(e.boot), e);
    if (next) {
      this.devices.set(dev, next);
      boots.add(e.boot);
      this.boots.set(dev, boots);
      this.seen.set(identity, now + retentionMs);
      if (result.gap) this.gaps.set(dev, (this.gaps.get(dev) ?? 0) + gapSize(result.gap));
      if (result.transition) this.outbox.push(outboxEntries.transition(e, result.transition, now));
    }
    return result;
  }

  get(tenant: string, device: string): DeviceState | null {
    const d = this.devices.get(`${tenant}\u0000${device}`);
    return d ? { ...d } : null;
  }

  list(tenant: string | null, limit: number): DeviceSummary[] {
    return [...this.devices.entries()]
      .filter(([, d]) => tenant === null || d.tenant === tenant)
      .sort(([, a], [, b]) => a.observedAt - b.observedAt)
      .slice(0, limit)
      .map(([dev, d]) => ({ ...d, gaps: this.gaps.get(dev) ?? 0 }));
  }

  countStale(observedBefore: number): number {
    let n = 0;
    for (const d of this.devices.values()) if (d.observedAt < observedBefore) n++;
    return n;
  }

  sweep(): number {
    const now = this.clock.now();
    let n = 0;
    for (const [k, until] of this.seen) {
      if (until <= now) {
        this.seen.delete(k);
        n++;
      }
    }
    return n;
  }
}
