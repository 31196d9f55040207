import type { Clock } from '../../core/clock.js';
import { type InhibitorStore, MAX_INHIBITORS_FOUND } from '../contract/index.js';
import { sweepMap } from './sweep.js';

interface Entry {
  tenant: string;
  rule: string;
  tuple: string;
  source: string;
  expiresAt: number;
}

const idOf = (tenant: string, rule: string, tuple: string, source: string) => JSON.stringify([tenant, rule, tuple, source]);

/** Inhibitors in memory; each call runs to completion synchronously (its atomic step). */
export class MemoryInhibitors implements InhibitorStore {
  private readonly entries = new Map<string, Entry>();

  constructor(
    private readonly clock: Clock,
    private readonly assertOpen: () => void,
  ) {}

  async put(tenant: string, rule: string, tuple: string, source: string, ttlMs: number) {
    this.assertOpen();
    this.entries.set(idOf(tenant, rule, tuple, source), { tenant, rule, tuple, source, expiresAt: this.clock.now() + ttlMs });
  }

  async find(tenant: string, rule: string, tuple: string) {
    this.assertOpen();
    const now = this.clock.now();
    const out: string[] = [];
    for (const e of this.entries.values()) {
      if (e.tenant === tenant && e.rule === rule && e.tuple === tuple && e.expiresAt > now) out.push(e.source);
      if (out.length >= MAX_INHIBITORS_FOUND) break;
    }
    return out;
  }

  async remove(tenant: string, source: string) {
    this.assertOpen();
    for (const [id, e] of this.entries) if (e.tenant === tenant && e.source === source) this.entries.delete(id);
  }

  sweep(batch: number): number {
    const now = this.clock.now();
    return sweepMap(this.entries, batch, (e) => e.expiresAt <= now);
  }
}
