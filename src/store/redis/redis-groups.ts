import { encodeRoute, type OutboxEntry } from '../../core/outbox.js';
import type { GroupRecord, GroupState, GroupStore } from '../contract/index.js';
import type { RedisConnection } from './connection.js';
import { unLp } from './keys.js';
import { scripts } from './scripts.js';
import { adoptSets } from './adopt-sets.js';
import type { LayoutSeam } from './layout-seam.js';

/** Groups on Redis: a JSON string per group in the group's shard (its outbox beside it); a commit is one script. */
export class RedisGroups implements GroupStore {
  private readonly conn: RedisConnection;

  constructor(private readonly l: LayoutSeam) {
    this.conn = l.conn;
  }

  private memberKey(tenant: string, member: string) {
    return this.l.at(adoptSets.member(tenant, member), (k) => k.groupKeys.member(tenant, member));
  }

  async get(tenant: string, groupKey: string) {
    const k = await this.l.at(adoptSets.group(tenant, groupKey), (l) => l.groupKeys.group(tenant, groupKey));
    const v = await this.conn.send(k, ['GET', k]);
    return v === null || v === undefined ? null : (JSON.parse(String(v)) as GroupRecord);
  }

  async commit(tenant: string, groupKey: string, expected: number, next: GroupState | null, entry: OutboxEntry | null) {
    const keys = await this.l.at(adoptSets.group(tenant, groupKey), (l) => [l.groupKeys.group(tenant, groupKey), l.outboxKeyFor(tenant, groupKey)]);
    const e = entry
      ? [entry.action, entry.tenant, entry.kind, entry.key, entry.severity, entry.summary, JSON.stringify(entry.data), entry.at, encodeRoute(entry.route) ?? '']
      : ['', '', '', '', '', '', '', 0, ''];
    const r = await this.conn.evalScript(scripts.groupCommit, keys, [expected, next ? JSON.stringify(next) : '', ...e]);
    return Number(r) === 1;
  }

  async memberOf(tenant: string, member: string) {
    const k = await this.memberKey(tenant, member);
    const v = await this.conn.send(k, ['GET', k]);
    return v === null || v === undefined ? null : String(v);
  }

  async remember(tenant: string, member: string, groupKey: string | null) {
    await this.conn.evalScript(scripts.groupRemember, [await this.memberKey(tenant, member)], [groupKey ?? '']);
  }

  async list(limit: number) {
    const out: Array<{ tenant: string; groupKey: string }> = [];
    for (const k of await this.conn.scan('{oo:*}:g:*', limit)) {
      const parts = unLp(k.slice(k.indexOf(':g:') + 3));
      if (parts?.length === 2) out.push({ tenant: parts[0]!, groupKey: parts[1]! });
    }
    return out;
  }
}
