import type { OutboxEntry } from '../../core/outbox.js';
import type { GroupState, GroupStore } from '../contract/index.js';
import * as shared from '../sql/groups.js';
import type { SqliteDb } from './sqlite-db.js';

/** Groups in the SQLite file; a commit is one GroupCommit transaction with its outbox entry. */
export class SqliteGroups implements GroupStore {
  private readonly s;

  constructor(private readonly x: SqliteDb) {
    const db = x.db;
    this.s = {
      get: db.prepare<[Record<string, unknown>], { record: string; version: number }>(shared.GET_GROUP),
      create: db.prepare(shared.CREATE_GROUP),
      update: db.prepare(shared.UPDATE_GROUP),
      delete: db.prepare(shared.DELETE_GROUP),
      memberOf: db.prepare<[Record<string, unknown>], { group_key: string }>(shared.MEMBER_OF),
      remember: db.prepare(shared.REMEMBER_MEMBER),
      forget: db.prepare(shared.FORGET_MEMBER),
      list: db.prepare<[Record<string, unknown>], { tenant: string; group_key: string }>(shared.LIST_GROUPS),
    };
  }

  async get(tenant: string, groupKey: string) {
    const r = this.s.get.get({ tenant, groupKey });
    return r ? { ...(JSON.parse(r.record) as GroupState), version: Number(r.version) } : null;
  }

  commit(tenant: string, groupKey: string, expected: number, next: GroupState | null, entry: OutboxEntry | null) {
    return this.x.writes.submit(() => {
      const params = { tenant, groupKey, expected, record: next ? JSON.stringify(next) : '' };
      const how = shared.commitStatement(expected, next);
      if (how === 'none') return false;
      if (this.s[how].run(params).changes !== 1) return false;
      this.x.append(entry);
      return true;
    });
  }

  async memberOf(tenant: string, member: string) {
    return this.s.memberOf.get({ tenant, member })?.group_key ?? null;
  }

  remember(tenant: string, member: string, groupKey: string | null) {
    return this.x.writes.submit(() => {
      if (groupKey) this.s.remember.run({ tenant, member, groupKey });
      else this.s.forget.run({ tenant, member });
    });
  }

  async list(limit: number) {
    return this.s.list.all({ limit }).map((r) => ({ tenant: r.tenant, groupKey: r.group_key }));
  }
}
