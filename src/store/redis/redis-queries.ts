import type { DeviceSummary, IncidentRecord, IncidentStore, OutboxEntry, QueryStore } from '../contract/index.js';
import type { RedisConnection } from './connection.js';
import { fieldMap, outboxEntryOf } from './fields.js';
import { type KeyLayout, lp, unLp } from './keys.js';
import { scripts } from './scripts.js';
import type { RedisDevices } from './redis-devices.js';

/** Keys of one tenant's listing index in one shard that the sweep looks at per pass (oldest first). */
const TRIM_PER_TENANT = 2000;

/** Lists and counts on Redis: from per-shard indexes, never a SCAN of the keyspace. */
export class RedisQueries implements QueryStore {
  constructor(
    private readonly conn: RedisConnection,
    private readonly incidents: IncidentStore,
    private readonly k: KeyLayout,
    private readonly devices: RedisDevices,
  ) {}

  /**
   * From the tenant's own listing indexes (lua/lib/listing.lua), one short
   * script per shard: never a SCAN of the keyspace, so another tenant's
   * data costs this listing nothing. The most recent keys of every shard are
   * merged (a key met in two shards while the shard count changes counts once),
   * and each is read as `get` reads it, so a key that expired since is left out.
   */
  async listIncidents(tenant: string, limit: number) {
    const replies = (await Promise.all(
      this.k.tenantIndexes('ti', tenant).map((key) => this.conn.evalScript(scripts.listIncidents, [key], [tenant, limit])),
    )) as string[][];
    const latest = new Map<string, number>();
    for (const reply of replies) {
      for (let i = 0; i + 1 < reply.length; i += 2) {
        const at = Number(reply[i + 1]);
        if ((latest.get(reply[i]!) ?? -1) < at) latest.set(reply[i]!, at);
      }
    }
    // Twice the limit: room for keys that expired but whose record is kept for the grace (get leaves them out).
    const candidates = [...latest.entries()].sort((a, b) => b[1] - a[1]).slice(0, limit * 2);
    const records = await Promise.all(candidates.map(([key]) => this.incidents.get(tenant, key)));
    return records
      .filter((r): r is IncidentRecord => r !== null)
      .sort((a, b) => b.lastSeenAt - a.lastSeenAt)
      .slice(0, limit);
  }

  /** The sweep's pass: every shard's listing indexes lose what expired (one short script per shard). */
  async trimListings(): Promise<number> {
    const trimmed = await Promise.all(this.k.allShards('tl').map((key) => this.conn.evalScript(scripts.trimListings, [key], [TRIM_PER_TENANT])));
    return trimmed.reduce<number>((a, b) => a + Number(b), 0);
  }

  /** Exact: the sum of every shard's live index (one short script per shard, on the server's clock). */
  async countLiveIncidents() {
    const counts = await Promise.all(this.k.allShards('lv').map((key) => this.conn.evalScript(scripts.countLive, [key], [])));
    return counts.reduce<number>((a, b) => a + Number(b), 0);
  }

  /**
   * From indexes, oldest observation first, never a SCAN: a tenant's own
   * device index (`{oo:S}:tf:<tenant>`, kept by apply-event.lua), or without
   * a tenant every shard's freshness index. Each device is then read as the
   * current layout keeps it, so one met in two shards while the shard
   * count changes counts once, at its latest state.
   */
  async listDevices(tenant: string | null, limit: number): Promise<DeviceSummary[]> {
    const idx = tenant === null ? this.k.allShards('f') : this.k.tenantIndexes('tf', tenant);
    const replies = (await Promise.all(idx.map((key) => this.conn.send(key, ['ZRANGE', key, '0', String(limit - 1)])))) as string[][];
    const ids = new Map<string, [string, string]>();
    for (const members of replies) {
      for (const m of members) {
        const pair: [string, string] | null = tenant === null ? (unLp(m)?.length === 2 ? (unLp(m) as [string, string]) : null) : [tenant, m];
        if (pair) ids.set(lp(...pair), pair);
      }
    }
    const devices = await Promise.all([...ids.values()].map(([t, d]) => this.devices.summary(t, d)));
    return devices
      .filter((d): d is DeviceSummary => d !== null)
      .sort((a, b) => a.observedAt - b.observedAt)
      .slice(0, limit);
  }

  async countStaleDevices(observedBefore: number): Promise<number> {
    const counts = await Promise.all(this.k.allShards('f').map((key) => this.conn.send(key, ['ZCOUNT', key, '-inf', `(${observedBefore}`])));
    return counts.reduce<number>((a, b) => a + Number(b), 0);
  }

  /** Every shard's outbox stream, oldest first within a shard, then ordered by time across shards. */
  async listOutbox(): Promise<OutboxEntry[]> {
    const streams = await Promise.all(this.k.allShards('o').map((key) => this.conn.send(key, ['XRANGE', key, '-', '+'])));
    const out: OutboxEntry[] = [];
    for (const entries of streams as Array<Array<[string, string[]]>>) {
      for (const [, fields] of entries) {
        out.push(outboxEntryOf(fieldMap(fields)));
      }
    }
    return out.sort((a, b) => a.at - b.at);
  }
}
