import type { HeartbeatRecord, HeartbeatStore } from '../contract/index.js';
import type { RedisConnection } from './connection.js';
import { heartbeatKey } from './keys.js';
import { scripts } from './scripts.js';

/** `since,last,missed` (ms, empty for none): one hash field per heartbeat. */
function parse(name: string, value: string): HeartbeatRecord {
  const [since, last, missed] = value.split(',');
  const num = (s: string | undefined) => (s === undefined || s === '' ? null : Number(s));
  return { name, since: Number(since), lastPingAt: num(last), missedBasis: num(missed) };
}

/** Heartbeats on Redis: one hash per tenant, every write one script. */
export class RedisHeartbeats implements HeartbeatStore {
  constructor(private readonly conn: RedisConnection) {}

  async enroll(tenant: string, name: string, now: number) {
    await this.conn.evalScript(scripts.heartbeatEnroll, [heartbeatKey(tenant)], [name, now]);
  }

  async ping(tenant: string, name: string, now: number) {
    return parse(name, String(await this.conn.evalScript(scripts.heartbeatPing, [heartbeatKey(tenant)], [name, now])));
  }

  async claimMiss(tenant: string, name: string, basis: number) {
    return Number(await this.conn.evalScript(scripts.heartbeatClaim, [heartbeatKey(tenant)], [name, basis])) === 1;
  }

  async clearMiss(tenant: string, name: string, basis: number) {
    await this.conn.evalScript(scripts.heartbeatClear, [heartbeatKey(tenant)], [name, basis]);
  }

  async list(tenant: string) {
    const k = heartbeatKey(tenant);
    const flat = (await this.conn.send(k, ['HGETALL', k])) as string[] | Record<string, string>;
    const pairs: Array<[string, string]> = Array.isArray(flat)
      ? Array.from({ length: flat.length / 2 }, (_, i) => [String(flat[2 * i]), String(flat[2 * i + 1])])
      : Object.entries(flat);
    return pairs.map(([n, v]) => parse(n, v)).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }
}
