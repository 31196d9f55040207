import type { Clock } from '../../core/clock.js';
import type { RequestBegin, RequestStore, StoredAnswer } from '../contract/index.js';
import { memoryId } from './memory-incidents.js';
import { sweepMap } from './sweep.js';

interface Held {
  bodyHash: string;
  answer: StoredAnswer | null;
  until: number;
}

/** Idempotency-Keys in memory; each call runs to completion synchronously (its atomic step). */
export class MemoryRequests implements RequestStore {
  private readonly held = new Map<string, Held>();

  constructor(
    private readonly clock: Clock,
    private readonly assertOpen: () => void,
  ) {}

  async begin(tenant: string, key: string, bodyHash: string, leaseMs: number): Promise<RequestBegin> {
    this.assertOpen();
    const now = this.clock.now();
    const id = memoryId(tenant, key);
    const h = this.held.get(id);
    if (h && h.until > now) return h.answer ? { state: 'done', bodyHash: h.bodyHash, answer: { ...h.answer } } : { state: 'in_flight', bodyHash: h.bodyHash };
    this.held.set(id, { bodyHash, answer: null, until: now + leaseMs });
    return { state: 'new' };
  }

  async finish(tenant: string, key: string, bodyHash: string, answer: StoredAnswer, keepMs: number): Promise<void> {
    this.assertOpen();
    this.held.set(memoryId(tenant, key), { bodyHash, answer: { ...answer }, until: this.clock.now() + keepMs });
  }

  async abandon(tenant: string, key: string, bodyHash: string): Promise<void> {
    this.assertOpen();
    const id = memoryId(tenant, key);
    const h = this.held.get(id);
    if (h && !h.answer && h.bodyHash === bodyHash) this.held.delete(id);
  }

  sweep(batch: number): number {
    const now = this.clock.now();
    return sweepMap(this.held, batch, (h) => h.until <= now);
  }
}
