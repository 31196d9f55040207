import type { TicketOwner, TicketStore } from '../contract/index.js';
import * as shared from '../sql/tickets.js';
import type { SqliteDb } from './sqlite-db.js';

type Ref = { ref: string };

/** Ticket ids in the SQLite file; every call is one GroupCommit transaction. */
export class SqliteTickets implements TicketStore {
  private readonly s;

  constructor(private readonly x: SqliteDb) {
    const db = x.db;
    this.s = {
      find: db.prepare<[Record<string, unknown>], Ref>(shared.FIND_TICKET),
      claim: db.prepare<[Record<string, unknown>], Ref>(shared.CLAIM_TICKET),
      forget: db.prepare(shared.FORGET_TICKET),
      sweep: db.prepare(shared.SWEEP_TICKETS),
    };
  }

  find(owner: TicketOwner, keepMs: number) {
    return this.x.writes.submit(() => {
      const now = this.x.clock.now();
      return this.s.find.get({ ...owner, now, until: now + keepMs })?.ref ?? null;
    });
  }

  claim(owner: TicketOwner, ref: string, keepMs: number) {
    return this.x.writes.submit(() => {
      const now = this.x.clock.now();
      return this.s.claim.get({ ...owner, ref, now, until: now + keepMs })!.ref;
    });
  }

  forget(owner: TicketOwner, ref: string) {
    return this.x.writes.submit(() => {
      this.s.forget.run({ ...owner, ref });
    });
  }

  /** Inside a sweep's transaction. */
  sweep(batch: number): number {
    return this.s.sweep.run({ now: this.x.clock.now(), batch }).changes;
  }
}
