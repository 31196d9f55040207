/**
 * The least a per-key history kept apart from the decision's own record can
 * cost: each event the recorder did not fold is kept once, where a read by
 * key finds it, and nothing else is done. No fold of a run across batches,
 * no order number, no bound per key, no retention, no expiry index: a
 * history without these is not one the product could ship, so what the
 * real one loses beyond this figure is what its guarantees cost, and what
 * this figure loses is what any design of this shape would.
 */
import type { HistoryAppend, HistoryStore } from '../../src/store/contract/index.js';
import { bodyOf } from '../../src/store/contract/index.js';
import type { RedisStore } from '../../src/store/redis/redis-store.js';
import type { Backend } from '../backends/backend.js';
import type { BenchSqliteStore } from '../backends/sqlite.js';

export type FloorStore = Pick<HistoryStore, 'append'>;

/** A map by tenant, then key, of each key's events. */
function memoryFloor(): FloorStore {
  const byTenant = new Map<string, Map<string, HistoryAppend['event'][]>>();
  return {
    async append(entries) {
      for (const a of entries) {
        let keys = byTenant.get(a.tenant);
        if (!keys) byTenant.set(a.tenant, (keys = new Map()));
        const events = keys.get(a.key);
        if (events) events.push(a.event);
        else keys.set(a.key, [a.event]);
      }
      return { overTenantBytes: 0 };
    },
  };
}

/** One INSERT per event into a table with only the key's index, in the store's own group commit. */
function sqliteFloor(store: BenchSqliteStore): FloorStore {
  const { db, writes } = store.file;
  db.exec(`CREATE TABLE IF NOT EXISTS history_floor (id INTEGER PRIMARY KEY, tenant TEXT NOT NULL, key TEXT NOT NULL, at INTEGER NOT NULL, body TEXT NOT NULL);
           CREATE INDEX IF NOT EXISTS history_floor_key ON history_floor (tenant, key, id)`);
  const insert = db.prepare<[string, string, number, string]>('INSERT INTO history_floor (tenant, key, at, body) VALUES (?, ?, ?, ?)');
  return {
    append: (entries) =>
      writes.submit(() => {
        for (const a of entries) insert.run(a.tenant, a.key, a.event.at, bodyOf(a.event));
        return { overTenantBytes: 0 };
      }),
  };
}

/** One RPUSH per event onto the key's list, a batch in one script call (a single server: every key in one call). */
const RPUSH_EACH = `for i, k in ipairs(KEYS) do redis.call('RPUSH', k, ARGV[i]) end return #KEYS`;
function redisFloor(store: RedisStore): FloorStore {
  return {
    async append(entries) {
      if (entries.length === 0) return { overTenantBytes: 0 };
      const keys = entries.map((a) => `{oo:floor}:hf:${a.tenant}:${a.key}`);
      const items = entries.map((a) => `${a.event.at}\u001f${bodyOf(a.event)}`);
      await store.conn.send(keys[0]!, ['EVAL', RPUSH_EACH, String(keys.length), ...keys, ...items]);
      return { overTenantBytes: 0 };
    },
  };
}

/** The floor for a bench backend, or null where none is measured (Postgres, the Cluster). */
export function floorOf(b: Backend, cluster: boolean): FloorStore | null {
  if (b.name === 'memory') return memoryFloor();
  if (b.name === 'sqlite') return sqliteFloor(b.store as BenchSqliteStore);
  if (b.name === 'redis' && !cluster) return redisFloor(b.store as RedisStore);
  return null;
}
