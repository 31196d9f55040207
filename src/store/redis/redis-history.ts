import { type AppendResult, bodyOf, eventOf, runOf, type HistoryAppend, type HistoryKey, type HistoryLimits, type HistoryStore } from '../contract/index.js';
import type { RedisConnection } from './connection.js';
import { scripts } from './scripts.js';
import { adoptSets } from './adopt-sets.js';
import { historyTallyKeys, shardTagOf, unLpBytes } from './keys.js';
import type { LayoutSeam } from './layout-seam.js';

/** What history-append.lua puts between a run's fields and the body. */
const US = '\u001f';

/** Events one script call appends at most: its arguments stay bounded (three per event). */
const CALL_MAX = 500;

/** A part of a batch that one script call writes, or one shard move refuses, whole. */
export interface HistoryWrites {
  /** Answers how many events were past their tenant's bound, and not kept. */
  write(entries: readonly HistoryAppend[], limits: HistoryLimits): Promise<number>;
}

/**
 * Writes one part of a history batch (lua/history-append.lua): one script
 * call, or on a cluster one per shard its keys fall in (one, as RedisHistory
 * parts a batch, unless a move made the part again on a new count). The
 * store follows it on its own (redis-store.ts): a part a shard move refuses
 * is made again by itself, and the parts already applied are not.
 */
export class RedisHistoryWrites implements HistoryWrites {
  constructor(
    private readonly l: LayoutSeam,
    private readonly cluster = false,
  ) {}

  async write(entries: readonly HistoryAppend[], limits: HistoryLimits) {
    // Every key placed at once: one adoption check, not one await per event.
    const keys = await this.l.at(
      entries.map((a) => adoptSets.history(a.tenant, a.key)),
      (k) => entries.map((a) => k.historyKey(a.tenant, a.key)),
    );
    // On a single server one call for every shard (the script guards each key's shard). On a cluster one shard's
    // keys, unless this is a part made again after a move spread them over the new count's shards.
    // A tenant's bound is kept per shard (one script sees one shard): each shard holds its share.
    const budget = limits.maxTenantBytes === undefined ? '' : Math.ceil(limits.maxTenantBytes / this.l.keys.shards);
    const calls = new Map<string, { keys: string[]; tallies: string[]; args: Array<string | number> }>();
    entries.forEach((a, i) => {
      const k = keys[i]!;
      const group = this.cluster ? shardTagOf(k) : '';
      let c = calls.get(group);
      if (!c) calls.set(group, (c = { keys: [], tallies: [], args: [limits.maxEvents, Math.ceil(limits.keepMs), 0, budget] }));
      const r = runOf(a);
      c.keys.push(k);
      c.tallies.push(...historyTallyKeys(k, a.tenant));
      // A fold is an equality token: one that held the separator could not be read back, so it never does.
      const fold = (a.fold ?? '').replaceAll(US, ' ');
      // The element as the script stores it (its header's numbers whole, as the script reads them back).
      const last = Math.trunc(r.last_at);
      c.args.push(fold, last, [fold, Math.trunc(r.count), Math.trunc(r.first_at), last, Math.trunc(r.max_gap_ms), bodyOf(a.event)].join(US));
    });
    const over = await Promise.all(
      [...calls.values()].map((c) => {
        c.args[2] = c.keys.length;
        return this.l.conn.evalScript(scripts.historyAppend, [...c.keys, ...c.tallies], c.args);
      }),
    );
    return over.reduce<number>((sum, n) => sum + Number(n), 0);
  }
}

/**
 * Histories on Redis: a list per key in the key's shard. A batch is one
 * script call on a single server, one per shard on a cluster (a script's
 * keys must share a slot there), as the decisions are grouped, in parts of
 * at most CALL_MAX events; each part is written, or refused by a shard
 * move and made again, whole (HistoryWrites).
 */
export class RedisHistory implements HistoryStore {
  private readonly conn: RedisConnection;

  constructor(
    private readonly l: LayoutSeam,
    private readonly writes: HistoryWrites,
    private readonly cluster = false,
  ) {
    this.conn = l.conn;
  }

  private keyOf(tenant: string, key: string) {
    return this.l.at(adoptSets.history(tenant, key), (k) => k.historyKey(tenant, key));
  }

  async append(entries: readonly HistoryAppend[], limits: HistoryLimits): Promise<AppendResult> {
    // Parts by shard on a cluster, on the count as it is now (a part made again after a move is placed anew).
    const parts = new Map<string, HistoryAppend[]>();
    for (const a of entries) {
      const tag = this.cluster ? shardTagOf(this.l.keys.historyKey(a.tenant, a.key)) : '';
      const part = parts.get(tag);
      if (part) part.push(a);
      else parts.set(tag, [a]);
    }
    const writes: Array<Promise<number>> = [];
    for (const part of parts.values()) for (let i = 0; i < part.length; i += CALL_MAX) writes.push(this.writes.write(part.slice(i, i + CALL_MAX), limits));
    return { overTenantBytes: (await Promise.all(writes)).reduce((sum, n) => sum + n, 0) };
  }

  async read(tenant: string, key: string) {
    const k = await this.keyOf(tenant, key);
    const items = (await this.conn.send(k, ['LRANGE', k, '0', '-1'])) as string[];
    return items.map((item) => {
      const [fold = '', count, first, last, gap, ...body] = String(item).split(US);
      return eventOf(body.join(US), {
        fold: fold === '' ? null : fold,
        count: Number(count),
        first_at: Number(first),
        last_at: Number(last),
        gap: Number(gap),
      });
    });
  }

  /**
   * A SCAN of every master for history lists, each judged by its newest
   * element's last time (a shard move in progress may show a key twice: once).
   */
  async keysSince(since: number, limit: number) {
    const found = new Map<string, HistoryKey>();
    for (const k of await this.conn.scan('{oo:*}:hi:*', Number.MAX_SAFE_INTEGER)) {
      if (found.size >= limit) break;
      const parts = unLpBytes(k.slice(k.indexOf(':hi:') + 4));
      if (parts?.length !== 2) continue;
      const [newest] = (await this.conn.send(k, ['LRANGE', k, '-1', '-1'])) as string[];
      if (newest === undefined || Number(String(newest).split(US)[3]) < since) continue;
      const [tenant = '', key = ''] = parts;
      found.set(`${tenant}\u0000${key}`, { tenant, key });
    }
    return [...found.values()];
  }
}
