import type { Clock } from '../../core/clock.js';
import { beginQuota, finishQuota, type KeptAnswer, type RequestBegin, type RequestQuota, type RequestStore, type StoredAnswer } from '../contract/index.js';
import { memoryId } from './memory-incidents.js';

interface Held {
  tenant: string;
  bodyHash: string;
  answer: StoredAnswer | null;
  until: number;
  size: number;
}

/** Idempotency-Keys in memory; each call runs to completion synchronously (its atomic step). */
export class MemoryRequests implements RequestStore {
  private readonly held = new Map<string, Held>();
  /** Each tenant's records and their answers' bytes, expired ones included until they are swept. */
  private readonly quota = new Map<string, RequestQuota>();

  constructor(
    private readonly clock: Clock,
    private readonly assertOpen: () => void,
  ) {}

  private quotaOf(tenant: string): RequestQuota {
    return this.quota.get(tenant) ?? { keys: 0, bytes: 0 };
  }

  private add(tenant: string, delta: RequestQuota) {
    const q = this.quotaOf(tenant);
    const next = { keys: q.keys + delta.keys, bytes: q.bytes + delta.bytes };
    if (next.keys === 0) this.quota.delete(tenant);
    else this.quota.set(tenant, next);
  }

  async begin(tenant: string, key: string, bodyHash: string, leaseMs: number, maxKeys: number): Promise<RequestBegin> {
    this.assertOpen();
    const now = this.clock.now();
    const id = memoryId(tenant, key);
    const h = this.held.get(id);
    if (h && h.until > now) return h.answer ? { state: 'done', bodyHash: h.bodyHash, answer: { ...h.answer } } : { state: 'in_flight', bodyHash: h.bodyHash };
    const delta = beginQuota(this.quotaOf(tenant), h, maxKeys);
    if (!delta) return { state: 'full' };
    this.add(tenant, delta);
    this.held.set(id, { tenant, bodyHash, answer: null, until: now + leaseMs, size: 0 });
    return { state: 'new' };
  }

  async finish(tenant: string, key: string, bodyHash: string, answer: KeptAnswer, keepMs: number, maxBytes: number): Promise<'whole' | 'digest'> {
    this.assertOpen();
    const id = memoryId(tenant, key);
    const { kept, size, delta } = finishQuota(this.quotaOf(tenant), this.held.get(id), answer, maxBytes);
    this.add(tenant, delta);
    this.held.set(id, { tenant, bodyHash, answer: { ...answer[kept] }, until: this.clock.now() + keepMs, size });
    return kept;
  }

  /** Forgets a record and what it cost its tenant. */
  private forget(id: string, h: Held) {
    this.held.delete(id);
    this.add(h.tenant, { keys: -1, bytes: -h.size });
  }

  async abandon(tenant: string, key: string, bodyHash: string): Promise<void> {
    this.assertOpen();
    const id = memoryId(tenant, key);
    const h = this.held.get(id);
    if (h && !h.answer && h.bodyHash === bodyHash) this.forget(id, h);
  }

  sweep(batch: number): number {
    const now = this.clock.now();
    let n = 0;
    for (const [id, h] of this.held) {
      if (n >= batch) break;
      if (h.until > now) continue;
      this.forget(id, h);
      n++;
    }
    return n;
  }
}
