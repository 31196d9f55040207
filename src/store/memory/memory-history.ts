import type { Clock } from '../../core/clock.js';
import {
  type AppendResult,
  bodyBytes,
  bodyOf,
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
  /** its stored body's bytes, counted against its tenant's bound (0 when no bound was asked) */
  bytes: number;
}

/** Histories in memory; each append runs to completion synchronously (its atomic step). */
export class MemoryHistory implements HistoryStore {
  /** by tenant, then key: a lookup hashes the strings it is given, not a joined one made per event */
  private readonly tenants = new Map<string, Map<string, Kept[]>>();
  /** the bytes each tenant's kept events hold */
  private readonly held = new Map<string, number>();

  constructor(
    private readonly clock: Clock,
    private readonly assertOpen: () => void,
  ) {}

  async append(entries: readonly HistoryAppend[], limits: HistoryLimits): Promise<AppendResult> {
    this.assertOpen();
    let overTenantBytes = 0;
    for (const a of entries) {
      let keys = this.tenants.get(a.tenant);
      if (!keys) this.tenants.set(a.tenant, (keys = new Map()));
      let list = keys.get(a.key);
      // A key's first event makes its list; a key's later ones change it in place (one map lookup, not two).
      if (!list) keys.set(a.key, (list = []));
      const r = runOf(a);
      const lastAt = r.last_at;
      const last = list[list.length - 1];
      if (a.fold !== undefined && last && last.fold === a.fold) {
        last.gap = Math.max(last.gap, r.max_gap_ms, r.first_at - last.last_at);
        last.count += r.count;
        last.last_at = lastAt;
        last.expiresAt = lastAt + limits.keepMs;
      } else {
        // Only a bound asked for is counted: the body is made for it (a fold above needs none).
        const bytes = limits.maxTenantBytes === undefined ? 0 : bodyBytes(bodyOf(a.event));
        const held = this.held.get(a.tenant) ?? 0;
        if (limits.maxTenantBytes !== undefined && held + bytes > limits.maxTenantBytes) {
          overTenantBytes++;
          if (list.length === 0) keys.delete(a.key);
          continue;
        }
        this.held.set(a.tenant, held + bytes);
        list.push({
          fold: a.fold ?? null,
          count: r.count,
          first_at: r.first_at,
          last_at: lastAt,
          gap: r.max_gap_ms,
          event: a.event,
          expiresAt: lastAt + limits.keepMs,
          bytes,
        });
      }
      // Beyond the newest `maxEvents`, or past their time as of this append (the oldest first).
      let drop = Math.max(0, list.length - limits.maxEvents);
      while (drop < list.length && list[drop]!.expiresAt <= lastAt) drop++;
      if (drop > 0) this.release(a.tenant, list.splice(0, drop));
      if (list.length === 0) keys.delete(a.key);
    }
    return { overTenantBytes };
  }

  /** Events no longer kept give their bytes back to their tenant. */
  private release(tenant: string, gone: readonly Kept[]): void {
    let bytes = 0;
    for (const k of gone) bytes += k.bytes;
    if (bytes === 0) return;
    const left = (this.held.get(tenant) ?? 0) - bytes;
    if (left > 0) this.held.set(tenant, left);
    else this.held.delete(tenant);
  }

  async read(tenant: string, key: string) {
    this.assertOpen();
    const now = this.clock.now();
    return (this.tenants.get(tenant)?.get(key) ?? []).filter((e) => e.expiresAt > now).map(copyOf);
  }

  async keysSince(since: number, limit: number) {
    this.assertOpen();
    const now = this.clock.now();
    const found: HistoryKey[] = [];
    for (const [tenant, keys] of this.tenants)
      for (const [key, list] of keys) {
        if (found.length >= limit) return found;
        if (list.some((e) => e.last_at >= since && e.expiresAt > now)) found.push({ tenant, key });
      }
    return found;
  }

  sweep(batch: number): number {
    const now = this.clock.now();
    let n = 0;
    for (const [tenant, keys] of this.tenants) {
      if (n >= batch) break;
      n += sweepMap(
        keys,
        batch - n,
        (list) => list.every((e) => e.expiresAt <= now),
        (_key, list) => this.release(tenant, list),
      );
      if (keys.size === 0) this.tenants.delete(tenant);
    }
    return n;
  }
}

/** A kept event as a read answers it: a copy (the caller may change it), with its run's fields when it folds a run. */
function copyOf(k: Kept): StoredHistoryEvent {
  const e = structuredClone(k.event) as StoredHistoryEvent;
  e.at = k.first_at;
  if (k.fold !== null) Object.assign(e, { count: k.count, first_at: k.first_at, last_at: k.last_at, max_gap_ms: k.gap });
  return e;
}
