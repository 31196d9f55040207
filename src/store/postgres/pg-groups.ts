import { encodeRoute, type OutboxEntry } from '../../core/outbox.js';
import type { GroupState, GroupStore } from '../contract/index.js';
import * as shared from '../sql/groups.js';
import { bind, forPg } from '../sql/named.js';
import type { PgDb } from './pg-db.js';
import { transaction } from './pool.js';

const SQL = {
  get: forPg(shared.GET_GROUP),
  create: forPg(shared.CREATE_GROUP),
  update: forPg(shared.UPDATE_GROUP),
  delete: forPg(shared.DELETE_GROUP),
  memberOf: forPg(shared.MEMBER_OF),
  remember: forPg(shared.REMEMBER_MEMBER),
  forget: forPg(shared.FORGET_MEMBER),
  list: forPg(shared.LIST_GROUPS),
};
const OUTBOX = 'INSERT INTO outbox (tenant, kind, action, key, severity, summary, data, at, route) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)';

/** Groups in Postgres: a commit is one transaction (the conditional write and its outbox entry). */
export class PgGroups implements GroupStore {
  constructor(private readonly x: PgDb) {}

  private run<R extends object = never>(q: (typeof SQL)[keyof typeof SQL], params: Record<string, unknown>) {
    return this.x.pool.query<R>(q.text, bind(q, params));
  }

  async get(tenant: string, groupKey: string) {
    const r = (await this.run<{ record: string; version: string }>(SQL.get, { tenant, groupKey })).rows[0];
    return r ? { ...(JSON.parse(r.record) as GroupState), version: Number(r.version) } : null;
  }

  commit(tenant: string, groupKey: string, expected: number, next: GroupState | null, entry: OutboxEntry | null) {
    const how = shared.commitStatement(expected, next);
    if (how === 'none') return Promise.resolve(false);
    return transaction(this.x.pool, null, async (c) => {
      const q = SQL[how];
      const r = await c.query(q.text, bind(q, { tenant, groupKey, expected, record: next ? JSON.stringify(next) : '' }));
      if (r.rowCount !== 1) return false;
      if (entry)
        await c.query(OUTBOX, [
          entry.tenant,
          entry.kind,
          entry.action,
          entry.key,
          entry.severity,
          entry.summary,
          JSON.stringify(entry.data),
          entry.at,
          encodeRoute(entry.route),
        ]);
      return true;
    });
  }

  async memberOf(tenant: string, member: string) {
    return (await this.run<{ group_key: string }>(SQL.memberOf, { tenant, member })).rows[0]?.group_key ?? null;
  }

  async remember(tenant: string, member: string, groupKey: string | null) {
    if (groupKey) await this.run(SQL.remember, { tenant, member, groupKey });
    else await this.run(SQL.forget, { tenant, member });
  }

  async list(limit: number) {
    return (await this.run<{ tenant: string; group_key: string }>(SQL.list, { limit })).rows.map((r) => ({ tenant: r.tenant, groupKey: r.group_key }));
  }
}
