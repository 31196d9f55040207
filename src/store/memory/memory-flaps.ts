import type { Clock } from '../../core/clock.js';
import { MAX_TRANSITIONS_KEPT, type FlapStore, type Transition } from '../contract/index.js';
import { sweepMap } from './sweep.js';

const idOf = (tenant: string, key: string) => `${tenant}\u0000${key}`;

/** Transitions in memory; each call runs to completion synchronously (its atomic step). */
export class MemoryFlaps implements FlapStore {
  private readonly keys = new Map<string, { list: Transition[]; until: number }>();

  constructor(
    private readonly clock: Clock,
    private readonly assertOpen: () => void,
  ) {}

  async record(tenant: string, key: string, action: Transition['action'], at: number, keepMs: number) {
    this.assertOpen();
    const id = idOf(tenant, key);
    const list = [...(this.keys.get(id)?.list ?? []), { at, action }].filter((t) => t.at >= at - keepMs).slice(-MAX_TRANSITIONS_KEPT);
    this.keys.set(id, { list, until: at + keepMs });
  }

  async history(tenant: string, key: string, since: number) {
    this.assertOpen();
    return (this.keys.get(idOf(tenant, key))?.list ?? []).filter((t) => t.at >= since).map((t) => ({ ...t }));
  }

  sweep(batch: number): number {
    const now = this.clock.now();
    return sweepMap(this.keys, batch, (k) => k.until <= now);
  }
}
