import { bodyOf, eventOf, runOf, type HistoryAppend, type HistoryKey, type HistoryLimits, type HistoryStore } from '../contract/index.js';
import type { RedisConnection } from './connection.js';
import { scripts } from './scripts.js';
import { adoptSets } from './adopt-sets.js';
import { shardTagOf, unLpBytes } from './keys.js';
import type { LayoutSeam } from './layout-seam.js';

/** What history-append.lua puts between a run's fields and the body. */
const US = '\u001f';

/** Histories on Redis: a list per key in the key's shard; a batch is one script per shard (lua/history-append.lua). */
export class RedisHistory implements HistoryStore {
  private readonly conn: RedisConnection;

  constructor(private readonly l: LayoutSeam) {
    this.conn = l.conn;
  }

  private keyOf(tenant: string, key: string) {
    return this.l.at(adoptSets.history(tenant, key), (k) => k.historyKey(tenant, key));
  }

  async append(entries: readonly HistoryAppend[], limits: HistoryLimits) {
    const byShard = new Map<string, { keys: string[]; args: Array<string | number> }>();
    for (const a of entries) {
      const k = await this.keyOf(a.tenant, a.key);
      const tag = shardTagOf(k);
      let s = byShard.get(tag);
      if (!s) byShard.set(tag, (s = { keys: [], args: [limits.maxEvents, Math.ceil(limits.keepMs)] }));
      const r = runOf(a);
      s.keys.push(k);
      // A fold is an equality token: one that held the separator could not be read back, so it never does.
      s.args.push((a.fold ?? '').replaceAll(US, ' '), r.count, r.first_at, r.last_at, r.max_gap_ms, bodyOf(a.event));
    }
    await Promise.all([...byShard.values()].map((s) => this.conn.evalScript(scripts.historyAppend, s.keys, s.args)));
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
