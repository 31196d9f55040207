import type { HeartbeatStore } from '../contract/index.js';
import * as shared from '../sql/heartbeats.js';
import { bind, forPg } from '../sql/named.js';
import type { PgDb } from './pg-db.js';

const SQL = {
  enroll: forPg(shared.ENROLL_HEARTBEAT),
  ping: forPg(shared.PING_HEARTBEAT),
  claim: forPg(shared.CLAIM_MISS),
  clear: forPg(shared.CLEAR_MISS),
  list: forPg(shared.LIST_HEARTBEATS),
};

/** Heartbeats in Postgres: each call one statement (the claim one conditional UPDATE). */
export class PgHeartbeats implements HeartbeatStore {
  constructor(private readonly x: PgDb) {}

  private run<R extends object = never>(q: (typeof SQL)[keyof typeof SQL], params: Record<string, unknown>) {
    return this.x.pool.query<R>(q.text, bind(q, params));
  }

  async enroll(tenant: string, name: string, now: number) {
    await this.run(SQL.enroll, { tenant, name, now });
  }

  async ping(tenant: string, name: string, now: number) {
    const r = await this.run<shared.HeartbeatRow>(SQL.ping, { tenant, name, now });
    return shared.heartbeatOf(r.rows[0]!);
  }

  async claimMiss(tenant: string, name: string, basis: number) {
    return ((await this.run(SQL.claim, { tenant, name, basis })).rowCount ?? 0) === 1;
  }

  async clearMiss(tenant: string, name: string, basis: number) {
    await this.run(SQL.clear, { tenant, name, basis });
  }

  async list(tenant: string) {
    return (await this.run<shared.HeartbeatRow>(SQL.list, { tenant })).rows.map(shared.heartbeatOf);
  }
}
