import { MAX_TRANSITIONS_KEPT, SWEEP_BATCH, type FlapStore, type Transition } from '../contract/index.js';
import * as shared from '../sql/flaps.js';
import { bind, forPg } from '../sql/named.js';
import type { PgDb } from './pg-db.js';
import { transaction } from './pool.js';

const SQL = {
  record: forPg(shared.RECORD_FLAP),
  trim: forPg(shared.TRIM_FLAPS),
  history: forPg(shared.FLAP_HISTORY),
  sweep: forPg(shared.SWEEP_FLAPS),
};

/** Transitions in Postgres: a record is one transaction (the insert and its trim). */
export class PgFlaps implements FlapStore {
  constructor(private readonly x: PgDb) {}

  record(tenant: string, key: string, action: Transition['action'], at: number, keepMs: number) {
    return transaction(this.x.pool, null, async (c) => {
      await c.query(SQL.record.text, bind(SQL.record, { tenant, key, at, action, until: at + keepMs }));
      await c.query(SQL.trim.text, bind(SQL.trim, { tenant, key, before: at - keepMs, kept: MAX_TRANSITIONS_KEPT }));
    });
  }

  async history(tenant: string, key: string, since: number) {
    return (await this.x.pool.query<shared.FlapRow>(SQL.history.text, bind(SQL.history, { tenant, key, since }))).rows.map(shared.transitionOf);
  }

  async sweep(): Promise<number> {
    return (await this.x.pool.query(SQL.sweep.text, bind(SQL.sweep, { now: this.x.clock.now(), batch: SWEEP_BATCH }))).rowCount ?? 0;
  }
}
