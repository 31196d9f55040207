import type { TicketOwner, TicketStore } from '../contract/index.js';
import type { RedisConnection } from './connection.js';
import { ticketKey } from './keys.js';
import { scripts } from './scripts.js';

const keyOf = (o: TicketOwner) => ticketKey(o.adapter, o.tenant, o.kind, o.key);

/** Ticket ids on Redis: a string per owner with its lifetime as a PX expiry. */
export class RedisTickets implements TicketStore {
  constructor(private readonly conn: RedisConnection) {}

  /** GETEX … PX: the read and the longer life in one command. */
  async find(owner: TicketOwner, keepMs: number) {
    const k = keyOf(owner);
    const ref = await this.conn.send(k, ['GETEX', k, 'PX', String(Math.ceil(keepMs))]);
    return ref === null || ref === undefined ? null : String(ref);
  }

  async claim(owner: TicketOwner, ref: string, keepMs: number) {
    return String(await this.conn.evalScript(scripts.ticketClaim, [keyOf(owner)], [ref, Math.ceil(keepMs)]));
  }

  async forget(owner: TicketOwner, ref: string) {
    await this.conn.evalScript(scripts.ticketForget, [keyOf(owner)], [ref]);
  }
}
