import type { DeviceSummary, IncidentRecord, IncidentStore, OutboxEntry, QueryStore } from '../contract/index.js';
import type { RedisConnection } from './connection.js';
import { fieldMap, outboxEntryOf } from './fields.js';
import { type KeyLayout, lp, unLp } from './keys.js';
import { scripts } from './scripts.js';

/** Text for a SCAN MATCH pattern, with glob's special characters escaped. */
const globLiteral = (t: string) => t.replace(/[*?[\]\\]/g, (c) => `\\${c}`);

/** Lists and counts on Redis: SCAN for keys of a kind, then read each (or a per-shard index). */
export class RedisQueries implements QueryStore {
  constructor(
    private readonly conn: RedisConnection,
    private readonly incidents: IncidentStore,
    private readonly k: KeyLayout,
  ) {}

  async listIncidents(tenant: string, limit: number) {
    const keys = await this.conn.scan(`{oo:*}:i:${globLiteral(tenant)}:*`, limit * 2);
    const prefix = (k: string) => k.indexOf(`:i:${tenant}:`) + `:i:${tenant}:`.length;
    const records = await Promise.all(keys.map((k) => this.incidents.get(tenant, k.slice(prefix(k)))));
    return records
      .filter((r): r is IncidentRecord => r !== null)
      .sort((a, b) => b.lastSeenAt - a.lastSeenAt)
      .slice(0, limit);
  }

  /** Exact: the sum of every shard's live index (one short script per shard, on the server's clock). */
  async countLiveIncidents() {
    const counts = await Promise.all(this.k.allShards('lv').map((key) => this.conn.evalScript(scripts.countLive, [key], [])));
    return counts.reduce<number>((a, b) => a + Number(b), 0);
  }

  /** Device keys are `{tag}:d:` + length-prefixed tenant and device: SCAN for them, read each. */
  async listDevices(tenant: string | null, limit: number): Promise<DeviceSummary[]> {
    const keys = await this.conn.scan(`{oo:*}:d:${tenant === null ? '' : globLiteral(lp(tenant))}*`, limit * 2);
    const devices = await Promise.all(
      keys.map(async (k): Promise<DeviceSummary | null> => {
        const ids = unLp(k.slice(k.indexOf(':d:') + 3));
        if (ids?.length !== 2) return null;
        const [boot, seq, state, obs, gaps] = (await this.conn.send(k, ['HMGET', k, 'boot', 'seq', 'state', 'obs', 'gaps'])) as Array<string | null>;
        if (boot == null) return null;
        return { tenant: ids[0]!, device: ids[1]!, boot, sequence: Number(seq), state: state!, observedAt: Number(obs), gaps: Number(gaps ?? 0) };
      }),
    );
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
