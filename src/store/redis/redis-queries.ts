import type { DeviceSummary, IncidentRecord, IncidentStore, OutboxEntry, QueryStore } from '../contract/index.js';
import type { RedisConnection } from './connection.js';
import { fieldMap, outboxEntryOf } from './fields.js';
import { type KeyLayout, lp, unLp } from './keys.js';
import { scripts } from './scripts.js';

/** Text for a SCAN MATCH pattern, with glob's special characters escaped. */
const globLiteral = (t: string) => t.replace(/[*?[\]\\]/g, (c) => `\\${c}`);
/** A key's shard tag and kind, exactly: `{oo:<digits>}:<kind>:`. */
const tagged = (kind: string) => new RegExp(`^\\{oo:\\d+\\}:${kind}:`);
const INCIDENT = tagged('i');
const DEVICE = tagged('d');

/**
 * The incident key a record key holds for `tenant`, or null when the record
 * is another tenant's. The SCAN glob's `*` spans any text, so another
 * tenant's key that contains `}:i:<tenant>:` matches it too: the key is parsed
 * from its start, never searched for the tenant.
 */
function incidentKeyOf(recordKey: string, tenant: string): string | null {
  const m = INCIDENT.exec(recordKey);
  const rest = m ? recordKey.slice(m[0].length) : '';
  return m && rest.startsWith(`${tenant}:`) ? rest.slice(tenant.length + 1) : null;
}

/** The tenant and device a device key holds, parsed from its start; null when it is not one. */
function deviceOf(recordKey: string): [string, string] | null {
  const m = DEVICE.exec(recordKey);
  const ids = m ? unLp(recordKey.slice(m[0].length)) : null;
  return ids?.length === 2 ? [ids[0]!, ids[1]!] : null;
}

/** Lists and counts on Redis: SCAN for keys of a kind, then read each (or a per-shard index). */
export class RedisQueries implements QueryStore {
  constructor(
    private readonly conn: RedisConnection,
    private readonly incidents: IncidentStore,
    private readonly k: KeyLayout,
  ) {}

  async listIncidents(tenant: string, limit: number) {
    const keys = await this.conn.scan(`{oo:*}:i:${globLiteral(tenant)}:*`, limit * 2, (k) => incidentKeyOf(k, tenant) !== null);
    const records = await Promise.all(keys.map((k) => this.incidents.get(tenant, incidentKeyOf(k, tenant)!)));
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
    const mine = (k: string) => {
      const ids = deviceOf(k);
      return ids !== null && (tenant === null || ids[0] === tenant);
    };
    const keys = await this.conn.scan(`{oo:*}:d:${tenant === null ? '' : globLiteral(lp(tenant))}*`, limit * 2, mine);
    const devices = await Promise.all(
      keys.map(async (k): Promise<DeviceSummary | null> => {
        const ids = deviceOf(k);
        if (!ids) return null;
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
