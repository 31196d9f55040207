import { SWEEP_BATCH, type TicketOwner, type TicketStore } from '../contract/index.js';
import { bind, forPg } from '../sql/named.js';
import * as shared from '../sql/tickets.js';
import type { PgDb } from './pg-db.js';

const SQL = {
  find: forPg(shared.FIND_TICKET),
  claim: forPg(shared.CLAIM_TICKET),
  forget: forPg(shared.FORGET_TICKET),
  sweep: forPg(shared.SWEEP_TICKETS),
};

/** Ticket ids in Postgres: each call one statement (the claim one INSERT … ON CONFLICT). */
export class PgTickets implements TicketStore {
  constructor(private readonly x: PgDb) {}

  async find(owner: TicketOwner, keepMs: number) {
    const now = this.x.clock.now();
    const r = await this.x.pool.query<{ ref: string }>(SQL.find.text, bind(SQL.find, { ...owner, now, until: now + keepMs }));
    return r.rows[0]?.ref ?? null;
  }

  async claim(owner: TicketOwner, ref: string, keepMs: number) {
    const now = this.x.clock.now();
    const r = await this.x.pool.query<{ ref: string }>(SQL.claim.text, bind(SQL.claim, { ...owner, ref, now, until: now + keepMs }));
    return r.rows[0]!.ref;
  }

  async forget(owner: TicketOwner, ref: string) {
    await this.x.pool.query(SQL.forget.text, bind(SQL.forget, { ...owner, ref }));
  }

  async sweep(): Promise<number> {
    return (await this.x.pool.query(SQL.sweep.text, bind(SQL.sweep, { now: this.x.clock.now(), batch: SWEEP_BATCH }))).rowCount ?? 0;
  }
}
