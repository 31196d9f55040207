import type { Clock } from '../../core/clock.js';
import { bodyOf, eventOf, runOf, type HistoryAppend, type HistoryLimits, type HistoryStore, type StoredRun } from '../contract/index.js';
import { sweepMap } from './sweep.js';

interface Kept extends StoredRun {
  body: string;
  expiresAt: number;
}

const idOf = (tenant: string, key: string) => `${tenant}\u0000${key}`;

/** Histories in memory; each append runs to completion synchronously (its atomic step). */
export class MemoryHistory implements HistoryStore {
  private readonly keys = new Map<string, Kept[]>();

  constructor(
    private readonly clock: Clock,
    private readonly assertOpen: () => void,
  ) {}

  async append(entries: readonly HistoryAppend[], limits: HistoryLimits) {
    this.assertOpen();
    for (const a of entries) {
      const id = idOf(a.tenant, a.key);
      const list = this.keys.get(id) ?? [];
      const r = runOf(a);
      const last = list.at(-1);
      if (a.fold !== undefined && last && last.fold === a.fold) {
        last.gap = Math.max(last.gap, r.max_gap_ms, r.first_at - last.last_at);
        last.count += r.count;
        last.last_at = r.last_at;
        last.expiresAt = r.last_at + limits.keepMs;
      } else {
        list.push({
          fold: a.fold ?? null,
          count: r.count,
          first_at: r.first_at,
          last_at: r.last_at,
          gap: r.max_gap_ms,
          body: bodyOf(a.event),
          expiresAt: r.last_at + limits.keepMs,
        });
      }
      // Beyond the newest `maxEvents`, or past their time as of this append.
      const kept = list.filter((e) => e.expiresAt > r.last_at).slice(-limits.maxEvents);
      if (kept.length > 0) this.keys.set(id, kept);
      else this.keys.delete(id);
    }
  }

  async read(tenant: string, key: string) {
    this.assertOpen();
    const now = this.clock.now();
    return (this.keys.get(idOf(tenant, key)) ?? []).filter((e) => e.expiresAt > now).map((e) => eventOf(e.body, e));
  }

  sweep(batch: number): number {
    const now = this.clock.now();
    return sweepMap(this.keys, batch, (list) => list.every((e) => e.expiresAt <= now));
  }
}
