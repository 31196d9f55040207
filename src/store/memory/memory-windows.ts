import type { Clock } from '../../core/clock.js';
import type { OutboxEntry, OutboxPayload } from '../../core/outbox.js';
import { assertSerializable, outboxEntries, type WindowClaim, type WindowStore } from '../contract/index.js';
import type { MemoryDeliveries } from './memory-deliveries.js';
import { memoryId } from './memory-incidents.js';
import { sweepMap } from './sweep.js';

/** Windowed claims for the memory store; each claim runs to completion synchronously (its atomic step). */
export class MemoryWindows implements WindowStore {
  /** key → until when it is claimed */
  private readonly windows = new Map<string, number>();

  constructor(
    private readonly clock: Clock,
    private readonly outbox: OutboxEntry[],
    private readonly deliveries: MemoryDeliveries,
    private readonly assertOpen: () => void,
  ) {}

  async claim(tenant: string, key: string, ttlMs: number, outbox?: OutboxPayload): Promise<WindowClaim> {
    this.assertOpen();
    assertSerializable(outbox);
    const now = this.clock.now();
    const id = memoryId(tenant, key);
    if ((this.windows.get(id) ?? 0) > now) {
      return this.deliveries.requeueFailing({ kind: 'violation', tenant, key }, now) > 0 ? 'requeued' : 'repeat';
    }
    this.windows.set(id, now + ttlMs);
    if (outbox) this.outbox.push(outboxEntries.violation(tenant, key, outbox, now));
    return 'claimed';
  }

  sweep(batch: number): number {
    const now = this.clock.now();
    return sweepMap(this.windows, batch, (until) => until <= now);
  }
}
