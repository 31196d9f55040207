import type { TicketOwner, TicketStore } from '../contract/index.js';
import type { RedisConnection } from './connection.js';
import type { KeyLayout } from './keys.js';
import { scripts } from './scripts.js';
import { adoptSets } from './adopt-sets.js';
import type { ShardMigration } from './shard-migration.js';

/** Ticket ids on Redis: a string per owner with its lifetime as a PX expiry. */
export class RedisTickets implements TicketStore {
  constructor(
    private readonly conn: RedisConnection,
    private readonly k: KeyLayout,
    private readonly migration: ShardMigration,
  ) {}

  private keyOf(o: TicketOwner) {
    return this.k.ticketKey(o.adapter, o.tenant, o.kind, o.key);
  }

  private adopt(o: TicketOwner) {
    return this.migration.ready(adoptSets.ticket(o));
  }

  /** GETEX … PX: the read and the longer life in one command. */
  async find(owner: TicketOwner, keepMs: number) {
    this.migration.unmoved(await this.adopt(owner));
    const k = this.keyOf(owner);
    const ref = await this.conn.send(k, ['GETEX', k, 'PX', String(Math.ceil(keepMs))]);
    return ref === null || ref === undefined ? null : String(ref);
  }

  async claim(owner: TicketOwner, ref: string, keepMs: number) {
    this.migration.unmoved(await this.adopt(owner));
    return String(await this.conn.evalScript(scripts.ticketClaim, [this.keyOf(owner)], [ref, Math.ceil(keepMs)]));
  }

  async forget(owner: TicketOwner, ref: string) {
    this.migration.unmoved(await this.adopt(owner));
    await this.conn.evalScript(scripts.ticketForget, [this.keyOf(owner)], [ref]);
  }
}
