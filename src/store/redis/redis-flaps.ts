import { MAX_TRANSITIONS_KEPT, type FlapStore, type Transition } from '../contract/index.js';
import type { RedisConnection } from './connection.js';
import type { KeyLayout } from './keys.js';
import { scripts } from './scripts.js';
import { adoptSets } from './adopt-sets.js';
import type { ShardMigration } from './shard-migration.js';

/** Transitions on Redis: a list per key in the key's shard, trimmed and expired by one script. */
export class RedisFlaps implements FlapStore {
  constructor(
    private readonly conn: RedisConnection,
    private readonly k: KeyLayout,
    private readonly migration: ShardMigration,
  ) {}

  private adopt(tenant: string, key: string) {
    return this.migration.ready(adoptSets.flap(tenant, key));
  }

  async record(tenant: string, key: string, action: Transition['action'], at: number, keepMs: number) {
    this.migration.unmoved(await this.adopt(tenant, key));
    await this.conn.evalScript(
      scripts.flapRecord,
      [this.k.flapKey(tenant, key)],
      [action === 'create' ? 'c' : 'x', at, Math.ceil(keepMs), MAX_TRANSITIONS_KEPT],
    );
  }

  async history(tenant: string, key: string, since: number) {
    this.migration.unmoved(await this.adopt(tenant, key));
    const k = this.k.flapKey(tenant, key);
    const items = (await this.conn.send(k, ['LRANGE', k, '0', '-1'])) as string[];
    return items
      .map((s): Transition => ({ at: Number(String(s).slice(1)), action: String(s).startsWith('c') ? 'create' : 'close' }))
      .filter((t) => t.at >= since);
  }
}
