import { type RequestBegin, type RequestStore, type StoredAnswer, SWEEP_BATCH } from '../contract/index.js';
import { bind, forPg } from '../sql/named.js';
import * as shared from '../sql/requests.js';
import type { PgDb } from './pg-db.js';
import { transaction } from './pool.js';

const SQL = {
  begin: forPg(shared.BEGIN_REQUEST),
  held: forPg(shared.HELD_REQUEST),
  finish: forPg(shared.FINISH_REQUEST),
  abandon: forPg(shared.ABANDON_REQUEST),
  sweep: forPg(shared.SWEEP_REQUESTS),
};

/** Idempotency-Keys in Postgres. */
export class PgRequests implements RequestStore {
  constructor(private readonly x: PgDb) {}

  /**
   * One INSERT … ON CONFLICT … WHERE decides; when it did not run the
   * request, the SELECT after it (same transaction, a fresh snapshot under
   * READ COMMITTED) reads the record that holds the key.
   */
  begin(tenant: string, key: string, bodyHash: string, leaseMs: number) {
    return transaction(this.x.pool, null, async (c): Promise<RequestBegin> => {
      const now = this.x.clock.now();
      const r = await c.query(SQL.begin.text, bind(SQL.begin, { tenant, key, bodyHash, until: now + leaseMs, now }));
      if (r.rowCount === 1) return { state: 'new' };
      return shared.heldAs((await c.query<shared.HeldRow>(SQL.held.text, bind(SQL.held, { tenant, key }))).rows[0]);
    });
  }

  async finish(tenant: string, key: string, bodyHash: string, answer: StoredAnswer, keepMs: number) {
    await this.x.pool.query(SQL.finish.text, bind(SQL.finish, { tenant, key, bodyHash, ...answer, until: this.x.clock.now() + keepMs }));
  }

  async abandon(tenant: string, key: string, bodyHash: string) {
    await this.x.pool.query(SQL.abandon.text, bind(SQL.abandon, { tenant, key, bodyHash }));
  }

  async sweep(): Promise<number> {
    return (await this.x.pool.query(SQL.sweep.text, bind(SQL.sweep, { now: this.x.clock.now(), batch: SWEEP_BATCH }))).rowCount ?? 0;
  }
}
