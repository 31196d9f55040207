import type { PoolClient } from 'pg';
import {
  type Origin,
  SILENCE_RETENTION_MS,
  SILENCE_TRIM_BATCH,
  SWEEP_BATCH,
  type Silence,
  type SilenceLimits,
  type SilenceStore,
  type SilenceUpdate,
} from '../contract/index.js';
import { bind, forPg } from '../sql/named.js';
import * as shared from '../sql/silences.js';
import type { PgDb } from './pg-db.js';
import { transaction } from './pool.js';

const SQL = {
  audit: `INSERT INTO audit (at, tenant, kind, key, decision, reason, replica, request_id) VALUES ($1, $2, 'silence', $3, $4, $5, $6, $7)`,
  bump: shared.BUMP_VERSION,
  version: shared.VERSION,
  create: forPg(shared.CREATE_SILENCE),
  trim: forPg(shared.TRIM_ENDED_SILENCES),
  update: forPg(shared.UPDATE_SILENCE),
  expire: forPg(shared.EXPIRE_SILENCE),
  get: forPg(shared.GET_SILENCE),
  list: forPg(shared.LIST_SILENCES),
  changed: forPg(shared.CHANGED_SILENCES),
  sweep: forPg(shared.SWEEP_SILENCES),
};

/**
 * Silences in Postgres. Each write is one transaction that first bumps the
 * version row: its row lock orders concurrent silence writes, so the open
 * count a create checks cannot change under it. Silence writes are rare
 * (people and amtool make them), so that order costs nothing that matters.
 */
export class PgSilences implements SilenceStore {
  constructor(private readonly x: PgDb) {}

  /** The audit row of a write that changed a silence, in its transaction. */
  private audit(c: PoolClient, now: number, tenant: string, id: string, decision: string, reason: string, origin?: Origin) {
    return c.query(SQL.audit, [now, tenant, id, decision, reason, this.x.ledger?.replica ?? '', origin?.requestId ?? 'none']);
  }

  create(s: Silence, limits: SilenceLimits, now: number, origin?: Origin) {
    return transaction(this.x.pool, null, async (c) => {
      await c.query(SQL.bump);
      if ((await c.query(SQL.create.text, bind(SQL.create, { ...shared.silenceParams(s), now, maxOpen: limits.open }))).rowCount !== 1) return false;
      await c.query(SQL.trim.text, bind(SQL.trim, { tenant: s.tenant, now, keep: limits.ended, batch: SILENCE_TRIM_BATCH }));
      await this.audit(c, now, s.tenant, s.id, 'CREATE', s.createdBy, origin);
      return true;
    });
  }

  update(s: Silence, now: number, origin?: Origin) {
    return transaction(this.x.pool, null, async (c): Promise<SilenceUpdate> => {
      await c.query(SQL.bump);
      if ((await c.query(SQL.update.text, bind(SQL.update, { ...shared.silenceParams(s), now }))).rowCount === 1) {
        await this.audit(c, now, s.tenant, s.id, 'UPDATE', s.createdBy, origin);
        return 'updated';
      }
      return (await c.query(SQL.get.text, bind(SQL.get, { tenant: s.tenant, id: s.id }))).rowCount === 1 ? 'expired' : 'absent';
    });
  }

  expire(tenant: string, id: string, now: number, origin?: Origin) {
    return transaction(this.x.pool, null, async (c) => {
      await c.query(SQL.bump);
      if ((await c.query(SQL.expire.text, bind(SQL.expire, { tenant, id, now }))).rowCount === 1) {
        await this.audit(c, now, tenant, id, 'EXPIRE', 'expired through the API', origin);
        return true;
      }
      return (await c.query(SQL.get.text, bind(SQL.get, { tenant, id }))).rowCount === 1;
    });
  }

  async get(tenant: string, id: string): Promise<Silence | null> {
    const r = (await this.x.pool.query<shared.SilenceRow>(SQL.get.text, bind(SQL.get, { tenant, id }))).rows[0];
    return r ? shared.silenceOf(r) : null;
  }

  async list(tenant: string | null, endedAfter = shared.EVER): Promise<Silence[]> {
    return (await this.x.pool.query<shared.SilenceRow>(SQL.list.text, bind(SQL.list, { tenant, after: endedAfter }))).rows.map(shared.silenceOf);
  }

  async changedSince(since: number) {
    return shared.changedOf((await this.x.pool.query<shared.ChangedRow>(SQL.changed.text, bind(SQL.changed, { since }))).rows);
  }

  async version(): Promise<number> {
    return (await this.x.pool.query<{ v: number }>(SQL.version)).rows[0]?.v ?? 0;
  }

  async sweep(): Promise<number> {
    return transaction(this.x.pool, null, async (c) => {
      const gone = (await c.query(SQL.sweep.text, bind(SQL.sweep, { before: this.x.clock.now() - SILENCE_RETENTION_MS, batch: SWEEP_BATCH }))).rowCount ?? 0;
      if (gone > 0) await c.query(SQL.bump);
      return gone;
    });
  }
}
