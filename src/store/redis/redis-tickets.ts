import type { TicketOwner, TicketStore } from '../contract/index.js';
import type { RedisConnection } from './connection.js';
import { scripts } from './scripts.js';
import { adoptSets } from './adopt-sets.js';
import type { LayoutSeam } from './layout-seam.js';

/** Ticket ids on Redis: a string per owner with its lifetime as a PX expiry. */
export class RedisTickets implements TicketStore {
  private readonly conn: RedisConnection;

  constructor(private readonly l: LayoutSeam) {
    this.conn = l.conn;
  }

  private keyOf(o: TicketOwner) {
    return this.l.at(adoptSets.ticket(o), (k) => k.ticketKey(o.adapter, o.tenant, o.kind, o.key));
  }

  /** The read and the longer life in one script. */
  async find(owner: TicketOwner, keepMs: number) {
    const ref = await this.conn.evalScript(scripts.ticketFind, [await this.keyOf(owner)], [Math.ceil(keepMs)]);
    return ref === null || ref === undefined ? null : String(ref);
  }

  async claim(owner: TicketOwner, ref: string, keepMs: number) {
    return String(await this.conn.evalScript(scripts.ticketClaim, [await this.keyOf(owner)], [ref, Math.ceil(keepMs)]));
  }

  async forget(owner: TicketOwner, ref: string) {
    await this.conn.evalScript(scripts.ticketForget, [await this.keyOf(owner)], [ref]);
  }
}
