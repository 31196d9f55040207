import type pg from 'pg';
import { answerBytes, type KeptAnswer, type RequestBegin, type RequestStore, SWEEP_BATCH } from '../contract/index.js';
import { bind, forPg } from '../sql/named.js';
import * as shared from '../sql/requests.js';
import type { PgDb } from './pg-db.js';
import { transaction } from './pool.js';

const SQL = {
  begin: 'SELECT state, body_hash AS "bodyHash", status, content_type AS "contentType", body FROM oo_request_begin($1, $2, $3, $4, $5, $6)',
  finish: 'SELECT oo_request_finish($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13) AS kept',
  abandon: 'SELECT oo_request_abandon($1, $2, $3)',
  lock: forPg(shared.LOCK_QUOTA),
  add: forPg(shared.ADD_QUOTA),
  tenants: forPg(shared.EXPIRED_TENANTS),
  sweep: forPg(shared.SWEEP_TENANT),
};

type Statement = 'lock' | 'add' | 'tenants' | 'sweep';

interface BeginRow {
  state: 'new' | 'full' | 'in_flight' | 'done';
  bodyHash: string | null;
  status: number | null;
  contentType: string | null;
  body: string | null;
}

/**
 * Idempotency-Keys in Postgres. Begin, finish and abandon are each one
 * server-side function (migration 016): one round trip that locks the
 * tenant's quota row first and holds it for that one statement, so a
 * tenant's count and bytes stay exact across replicas without its keyed
 * requests queueing on the lock for several round trips each.
 */
export class PgRequests implements RequestStore {
  constructor(private readonly x: PgDb) {}

  private async q<R extends pg.QueryResultRow>(c: pg.PoolClient, s: Statement, values: Record<string, unknown>) {
    return (await c.query<R>(SQL[s].text, bind(SQL[s], values))).rows;
  }

  async begin(tenant: string, key: string, bodyHash: string, leaseMs: number, maxKeys: number): Promise<RequestBegin> {
    const now = this.x.clock.now();
    const [r] = (await this.x.pool.query<BeginRow>(SQL.begin, [tenant, key, bodyHash, now, now + leaseMs, maxKeys])).rows;
    if (r!.state === 'new' || r!.state === 'full') return { state: r!.state };
    return shared.heldAs({ ...r!, bodyHash: r!.bodyHash! });
  }

  async finish(tenant: string, key: string, bodyHash: string, answer: KeptAnswer, keepMs: number, maxBytes: number) {
    const { whole, digest } = answer;
    const args = [tenant, key, bodyHash, this.x.clock.now() + keepMs, maxBytes];
    const forms = [whole, digest].flatMap((a) => [a.status, a.contentType, a.body, answerBytes(a)]);
    const [r] = (await this.x.pool.query<{ kept: 'whole' | 'digest' }>(SQL.finish, [...args, ...forms])).rows;
    return r!.kept;
  }

  async abandon(tenant: string, key: string, bodyHash: string) {
    await this.x.pool.query(SQL.abandon, [tenant, key, bodyHash]);
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
