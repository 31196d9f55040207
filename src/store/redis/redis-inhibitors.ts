import { type InhibitorStore, MAX_INHIBITORS_FOUND } from '../contract/index.js';
import type { RedisConnection } from './connection.js';
import { inhibitorKeys as K } from './keys.js';
import { scripts } from './scripts.js';

/** Inhibitors on Redis: a sorted set per rule and `equal` values, in the `{oo:inh}` slot; expiries on Redis's clock. */
export class RedisInhibitors implements InhibitorStore {
  constructor(private readonly conn: RedisConnection) {}

  async put(tenant: string, rule: string, tuple: string, source: string, ttlMs: number) {
    await this.conn.evalScript(scripts.inhibitorPut, [K.group(tenant, rule, tuple), K.source(tenant, source)], [source, Math.ceil(ttlMs)]);
  }

  async find(tenant: string, rule: string, tuple: string) {
    return (await this.conn.evalScript(scripts.inhibitorFind, [K.group(tenant, rule, tuple)], [MAX_INHIBITORS_FOUND])) as string[];
  }

  async remove(tenant: string, source: string) {
    await this.conn.evalScript(scripts.inhibitorRemove, [K.source(tenant, source)], [source]);
  }
}
