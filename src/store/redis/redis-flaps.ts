import { MAX_TRANSITIONS_KEPT, type FlapStore, type Transition } from '../contract/index.js';
import type { RedisConnection } from './connection.js';
import { scripts } from './scripts.js';
import { adoptSets } from './adopt-sets.js';
import type { LayoutSeam } from './layout-seam.js';

/** Transitions on Redis: a list per key in the key's shard, trimmed and expired by one script. */
export class RedisFlaps implements FlapStore {
  private readonly conn: RedisConnection;

  constructor(private readonly l: LayoutSeam) {
    this.conn = l.conn;
  }

  private keyOf(tenant: string, key: string) {
    return this.l.at(adoptSets.flap(tenant, key), (k) => k.flapKey(tenant, key));
  }

  async record(tenant: string, key: string, action: Transition['action'], at: number, keepMs: number) {
    await this.conn.evalScript(
      scripts.flapRecord,
      [await this.keyOf(tenant, key)],
      [action === 'create' ? 'c' : 'x', at, Math.ceil(keepMs), MAX_TRANSITIONS_KEPT],
    );
  }

  async history(tenant: string, key: string, since: number) {
    const k = await this.keyOf(tenant, key);
    const items = (await this.conn.send(k, ['LRANGE', k, '0', '-1'])) as string[];
    return items
      .map((s): Transition => ({ at: Number(String(s).slice(1)), action: String(s).startsWith('c') ? 'create' : 'close' }))
      .filter((t) => t.at >= since);
  }
}
