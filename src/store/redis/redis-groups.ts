import type { OutboxEntry } from '../../core/outbox.js';
import type { GroupRecord, GroupState, GroupStore } from '../contract/index.js';
import type { RedisConnection } from './connection.js';
import { type KeyLayout, unLp } from './keys.js';
import { scripts } from './scripts.js';
import { adoptSets } from './adopt-sets.js';
import type { ShardMigration } from './shard-migration.js';

/** Groups on Redis: a JSON string per group in the group's shard (its outbox beside it); a commit is one script. */
export class RedisGroups implements GroupStore {
  constructor(
    private readonly conn: RedisConnection,
    private readonly k: KeyLayout,
    private readonly migration: ShardMigration,
  ) {}

  /** While the shard count changes: the group and its delivery counters, from the old layout once. */
  private adoptGroup(tenant: string, groupKey: string) {
    return this.migration.ready(adoptSets.group(tenant, groupKey));
  }

  private adoptMember(tenant: string, member: string) {
    return this.migration.ready(adoptSets.member(tenant, member));
  }

  async get(tenant: string, groupKey: string) {
    this.migration.unmoved(await this.adoptGroup(tenant, groupKey));
    const k = this.k.groupKeys.group(tenant, groupKey);
    const v = await this.conn.send(k, ['GET', k]);
    return v === null || v === undefined ? null : (JSON.parse(String(v)) as GroupRecord);
  }

  async commit(tenant: string, groupKey: string, expected: number, next: GroupState | null, entry: OutboxEntry | null) {
    this.migration.unmoved(await this.adoptGroup(tenant, groupKey));
    const e = entry
      ? [entry.action, entry.tenant, entry.kind, entry.key, entry.severity, entry.summary, JSON.stringify(entry.data), entry.at]
      : ['', '', '', '', '', '', '', 0];
    const r = await this.conn.evalScript(
      scripts.groupCommit,
      [this.k.groupKeys.group(tenant, groupKey), this.k.outboxKeyFor(tenant, groupKey)],
      [expected, next ? JSON.stringify(next) : '', ...e],
    );
    return Number(r) === 1;
  }

  async memberOf(tenant: string, member: string) {
    this.migration.unmoved(await this.adoptMember(tenant, member));
    const k = this.k.groupKeys.member(tenant, member);
    const v = await this.conn.send(k, ['GET', k]);
    return v === null || v === undefined ? null : String(v);
  }

  async remember(tenant: string, member: string, groupKey: string | null) {
    this.migration.unmoved(await this.adoptMember(tenant, member));
    await this.conn.evalScript(scripts.groupRemember, [this.k.groupKeys.member(tenant, member)], [groupKey ?? '']);
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
