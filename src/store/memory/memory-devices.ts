import type { Clock } from '../../core/clock.js';
import { decideEvent, DUPLICATE, gapSize, type DeviceEvent, type DeviceState, type EventOutcome } from '../../core/event.js';
import type { OutboxEntry } from '../../core/outbox.js';
import { type DeviceStore, type Origin, outboxEntries } from '../contract/index.js';
import { sweepMap } from './sweep.js';

/** Device-event state for the memory store; every method runs to completion synchronously (its atomic step). */
export class MemoryDevices implements DeviceStore {
  /** tenant NUL device → its state */
  readonly states = new Map<string, DeviceState>();
  private readonly boots = new Map<string, Set<string>>();
  private readonly seen = new Map<string, number>();
  private readonly gaps = new Map<string, number>();

  constructor(
    private readonly clock: Clock,
    private readonly outbox: OutboxEntry[],
    private readonly assertOpen: () => void,
  ) {}

  async apply(e: DeviceEvent, retentionMs: number, _origin?: Origin, route?: readonly string[]): Promise<EventOutcome> {
    this.assertOpen();
    const now = this.clock.now();
    const dev = `${e.tenant}\u0000${e.device}`;
    const identity = `${dev}\u0000${e.boot}\u0000${e.sequence}`;
    const seenUntil = this.seen.get(identity);
    if (seenUntil !== undefined && seenUntil > now) return DUPLICATE;
    const boots = this.boots.get(dev) ?? new Set<string>();
    const { result, next } = decideEvent(this.states.get(dev) ?? null, boots.has(e.boot), e);
    if (next) {
      this.states.set(dev, next);
      boots.add(e.boot);
      this.boots.set(dev, boots);
      this.seen.set(identity, now + retentionMs);
      if (result.gap) this.gaps.set(dev, (this.gaps.get(dev) ?? 0) + gapSize(result.gap));
      if (result.transition) this.outbox.push(outboxEntries.transition(e, result.transition, now, route));
    }
    return result;
  }

  async get(tenant: string, device: string) {
    this.assertOpen();
    const d = this.states.get(`${tenant}\u0000${device}`);
    return d ? { ...d } : null;
  }

  gapsOf(dev: string): number {
    return this.gaps.get(dev) ?? 0;
  }

  /** Seen-markers past their retention, at most `batch`. */
  sweep(batch: number): number {
    const now = this.clock.now();
    return sweepMap(this.seen, batch, (until) => until <= now);
  }
}
