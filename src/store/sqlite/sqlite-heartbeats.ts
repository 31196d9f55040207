import type { HeartbeatStore } from '../contract/index.js';
import * as shared from '../sql/heartbeats.js';
import type { SqliteDb } from './sqlite-db.js';

/** Heartbeats in the SQLite file; every call is one GroupCommit transaction of one statement. */
export class SqliteHeartbeats implements HeartbeatStore {
  private readonly s;

  constructor(private readonly x: SqliteDb) {
    const db = x.db;
    this.s = {
      enroll: db.prepare(shared.ENROLL_HEARTBEAT),
      ping: db.prepare<[Record<string, unknown>], shared.HeartbeatRow>(shared.PING_HEARTBEAT),
      claim: db.prepare<[Record<string, unknown>], { name: string }>(shared.CLAIM_MISS),
      clear: db.prepare(shared.CLEAR_MISS),
      list: db.prepare<[Record<string, unknown>], shared.HeartbeatRow>(shared.LIST_HEARTBEATS),
    };
  }

  enroll(tenant: string, name: string, now: number) {
    return this.x.writes.submit(() => {
      this.s.enroll.run({ tenant, name, now });
    });
  }

  ping(tenant: string, name: string, now: number) {
    return this.x.writes.submit(() => shared.heartbeatOf(this.s.ping.get({ tenant, name, now })!));
  }

  claimMiss(tenant: string, name: string, basis: number) {
    return this.x.writes.submit(() => this.s.claim.get({ tenant, name, basis }) !== undefined);
  }

  clearMiss(tenant: string, name: string, basis: number) {
    return this.x.writes.submit(() => {
      this.s.clear.run({ tenant, name, basis });
    });
  }

  async list(tenant: string) {
    return this.s.list.all({ tenant }).map(shared.heartbeatOf);
  }
}
