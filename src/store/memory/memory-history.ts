import type { Clock } from '../../core/clock.js';
import {
  runOf,
  type HistoryAppend,
  type HistoryEvent,
  type HistoryKey,
  type HistoryLimits,
  type HistoryStore,
  type StoredHistoryEvent,
  type StoredRun,
} from '../contract/index.js';
import { sweepMap } from './sweep.js';

/** The appended event itself (an append hands it over; a read copies it), and its run. */
interface Kept extends StoredRun {
  event: HistoryEvent;
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
          event: a.event,
          expiresAt: r.last_at + limits.keepMs,
        });
      }
      // Beyond the newest `maxEvents`, or past their time as of this append (the oldest first).
      let drop = Math.max(0, list.length - limits.maxEvents);
      while (drop < list.length && list[drop]!.expiresAt <= r.last_at) drop++;
      if (drop > 0) list.splice(0, drop);
      if (list.length > 0) this.keys.set(id, list);
      else this.keys.delete(id);
    }
  }

  async read(tenant: string, key: string) {
    this.assertOpen();
    const now = this.clock.now();
    return (this.keys.get(idOf(tenant, key)) ?? []).filter((e) => e.expiresAt > now).map(copyOf);
  }

  async keysSince(since: number, limit: number) {
    this.assertOpen();
    const now = this.clock.now();
    const found: HistoryKey[] = [];
    for (const [id, list] of this.keys) {
      if (found.length >= limit) break;
      if (!list.some((e) => e.last_at >= since && e.expiresAt > now)) continue;
      const cut = id.indexOf('\u0000');
      found.push({ tenant: id.slice(0, cut), key: id.slice(cut + 1) });
    }
    return found;
  }

  sweep(batch: number): number {
    const now = this.clock.now();
    return sweepMap(this.keys, batch, (list) => list.every((e) => e.expiresAt <= now));
  }
}

/** A kept event as a read answers it: a copy (the caller may change it), with its run's fields when it folds a run. */
function copyOf(k: Kept): StoredHistoryEvent {
  const e = structuredClone(k.event) as StoredHistoryEvent;
  e.at = k.first_at;
  if (k.fold !== null) Object.assign(e, { count: k.count, first_at: k.first_at, last_at: k.last_at, max_gap_ms: k.gap });
  return e;
}
