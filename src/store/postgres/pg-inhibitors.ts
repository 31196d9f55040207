import { type InhibitorStore, MAX_INHIBITORS_FOUND, SWEEP_BATCH } from '../contract/index.js';
import { bind, forPg } from '../sql/named.js';
import * as shared from '../sql/inhibitors.js';
import type { PgDb } from './pg-db.js';

const SQL = {
  put: forPg(shared.PUT_INHIBITOR),
  find: forPg(shared.FIND_INHIBITORS),
  remove: forPg(shared.REMOVE_INHIBITOR),
  sweep: forPg(shared.SWEEP_INHIBITORS),
};

/** Inhibitors in Postgres: each call one statement. */
export class PgInhibitors implements InhibitorStore {
  constructor(private readonly x: PgDb) {}

  async put(tenant: string, rule: string, tuple: string, source: string, ttlMs: number) {
    await this.x.pool.query(SQL.put.text, bind(SQL.put, { tenant, rule, tuple, source, expiresAt: this.x.clock.now() + ttlMs }));
  }

  async find(tenant: string, rule: string, tuple: string) {
    const r = await this.x.pool.query<{ source: string }>(
      SQL.find.text,
      bind(SQL.find, { tenant, rule, tuple, now: this.x.clock.now(), limit: MAX_INHIBITORS_FOUND }),
    );
    return r.rows.map((x) => x.source);
  }

  async remove(tenant: string, source: string) {
    await this.x.pool.query(SQL.remove.text, bind(SQL.remove, { tenant, source }));
  }

  async sweep(): Promise<number> {
    return (await this.x.pool.query(SQL.sweep.text, bind(SQL.sweep, { now: this.x.clock.now(), batch: SWEEP_BATCH }))).rowCount ?? 0;
  }
}
