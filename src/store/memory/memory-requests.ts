import type { Clock } from '../../core/clock.js';
import { answerBytes, type KeptAnswer, type RequestBegin, type RequestStore, type StoredAnswer } from '../contract/index.js';
import { memoryId } from './memory-incidents.js';

interface Held {
  tenant: string;
  bodyHash: string;
  answer: StoredAnswer | null;
  until: number;
  bytes: number;
}

/** Idempotency-Keys in memory; each call runs to completion synchronously (its atomic step). */
export class MemoryRequests implements RequestStore {
  private readonly held = new Map<string, Held>();
  /** Each tenant's records and their answers' bytes, expired ones included until they are swept. */
  private readonly quota = new Map<string, { keys: number; bytes: number }>();

  constructor(
    private readonly clock: Clock,
    private readonly assertOpen: () => void,
  ) {}

  private quotaOf(tenant: string) {
    let q = this.quota.get(tenant);
    if (!q) this.quota.set(tenant, (q = { keys: 0, bytes: 0 }));
    return q;
  }

  private drop(h: Held) {
    const q = this.quotaOf(h.tenant);
    q.keys--;
    q.bytes -= h.bytes;
    if (q.keys === 0) this.quota.delete(h.tenant);
  }

  async begin(tenant: string, key: string, bodyHash: string, leaseMs: number, maxKeys: number): Promise<RequestBegin> {
    this.assertOpen();
    const now = this.clock.now();
    const id = memoryId(tenant, key);
    const h = this.held.get(id);
    if (h && h.until > now) return h.answer ? { state: 'done', bodyHash: h.bodyHash, answer: { ...h.answer } } : { state: 'in_flight', bodyHash: h.bodyHash };
    if (h) this.drop(h);
    else if (this.quotaOf(tenant).keys >= maxKeys) return { state: 'full' };
    this.quotaOf(tenant).keys++;
    this.held.set(id, { tenant, bodyHash, answer: null, until: now + leaseMs, bytes: 0 });
    return { state: 'new' };
  }

  async finish(tenant: string, key: string, bodyHash: string, answer: KeptAnswer, keepMs: number, maxBytes: number): Promise<'whole' | 'digest'> {
    this.assertOpen();
    const id = memoryId(tenant, key);
    const h = this.held.get(id);
    if (h) this.drop(h);
    const q = this.quotaOf(tenant);
    const kept = q.bytes + answerBytes(answer.whole) <= maxBytes ? 'whole' : 'digest';
    const a = answer[kept];
    const bytes = answerBytes(a);
    q.keys++;
    q.bytes += bytes;
    this.held.set(id, { tenant, bodyHash, answer: { ...a }, until: this.clock.now() + keepMs, bytes });
    return kept;
  }

  async abandon(tenant: string, key: string, bodyHash: string): Promise<void> {
    this.assertOpen();
    const id = memoryId(tenant, key);
    const h = this.held.get(id);
    if (h && !h.answer && h.bodyHash === bodyHash) {
      this.held.delete(id);
      this.drop(h);
    }
  }

  sweep(batch: number): number {
    const now = this.clock.now();
    let n = 0;
    for (const [id, h] of this.held) {
      if (n >= batch) break;
      if (h.until > now) continue;
      this.held.delete(id);
      this.drop(h);
      n++;
    }
    return n;
  }
}
