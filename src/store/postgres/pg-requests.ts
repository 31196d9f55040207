import type pg from 'pg';
import { type KeptAnswer, type RequestBegin, type RequestStore, SWEEP_BATCH } from '../contract/index.js';
import { bind, forPg } from '../sql/named.js';
import * as shared from '../sql/requests.js';
import type { PgDb } from './pg-db.js';
import { transaction } from './pool.js';

const SQL = {
  lock: forPg(shared.LOCK_QUOTA),
  add: forPg(shared.ADD_QUOTA),
  held: forPg(shared.HELD_REQUEST),
  put: forPg(shared.PUT_REQUEST),
  abandon: forPg(shared.ABANDON_REQUEST),
  tenants: forPg(shared.EXPIRED_TENANTS),
  sweep: forPg(shared.SWEEP_TENANT),
};

type Statement = keyof typeof SQL;

/**
 * Idempotency-Keys in Postgres. Each operation is one transaction that first
 * locks its tenant's quota row (the upsert holds it to the end), so the
 * read of the key's record and the writes after it are one atomic step for
 * that tenant, and its count and bytes stay exact across replicas.
 */
export class PgRequests implements RequestStore {
  constructor(private readonly x: PgDb) {}

  private async q<R extends pg.QueryResultRow>(c: pg.PoolClient, s: Statement, values: Record<string, unknown>) {
    return (await c.query<R>(SQL[s].text, bind(SQL[s], values))).rows;
  }

  /** Locks the tenant's quota and reads the key's record, in that order. */
  private async locked(c: pg.PoolClient, tenant: string, key: string) {
    const [q] = await this.q<shared.QuotaRow>(c, 'lock', { tenant });
    const [row] = await this.q<shared.HeldRow>(c, 'held', { tenant, key });
    return { q: q!, row };
  }

  begin(tenant: string, key: string, bodyHash: string, leaseMs: number, maxKeys: number) {
    return transaction(this.x.pool, null, async (c): Promise<RequestBegin> => {
      const now = this.x.clock.now();
      const { q, row } = await this.locked(c, tenant, key);
      const step = shared.beginStep(q, row, now, maxKeys);
      if (step.delta) {
        await this.q(c, 'put', shared.putValues(tenant, key, bodyHash, now + leaseMs));
        await this.q(c, 'add', { tenant, ...step.delta });
      }
      return step.answer;
    });
  }

  finish(tenant: string, key: string, bodyHash: string, answer: KeptAnswer, keepMs: number, maxBytes: number) {
    return transaction(this.x.pool, null, async (c) => {
      const { q, row } = await this.locked(c, tenant, key);
      const step = shared.finishStep(q, row, answer, maxBytes);
      await this.q(c, 'put', shared.putValues(tenant, key, bodyHash, this.x.clock.now() + keepMs, answer[step.kept], step.size));
      await this.q(c, 'add', { tenant, ...step.delta });
      return step.kept;
    });
  }

  abandon(tenant: string, key: string, bodyHash: string) {
    return transaction(this.x.pool, null, async (c) => {
      await this.q(c, 'lock', { tenant });
      const [gone] = await this.q<{ size: string }>(c, 'abandon', { tenant, key, bodyHash });
      if (gone) await this.q(c, 'add', { tenant, keys: -1, bytes: -Number(gone.size) });
    });
  }

  /** Tenant by tenant, each in its own transaction that locks its quota first (the one lock order). */
  async sweep(): Promise<number> {
    const now = this.x.clock.now();
    const { rows } = await this.x.pool.query<{ tenant: string }>(SQL.tenants.text, bind(SQL.tenants, { now, batch: SWEEP_BATCH }));
    let n = 0;
    for (const { tenant } of rows) {
      n += await transaction(this.x.pool, null, async (c) => {
        await this.q(c, 'lock', { tenant });
        const gone = await this.q<{ size: string }>(c, 'sweep', { tenant, now, batch: SWEEP_BATCH });
        await this.q(c, 'add', { tenant, keys: -gone.length, bytes: -gone.reduce((a, r) => a + Number(r.size), 0) });
        return gone.length;
      });
    }
    return n;
  }
}
