import type { Clock } from '../../core/clock.js';
import type { TicketOwner, TicketStore } from '../contract/index.js';
import { sweepMap } from './sweep.js';

interface Held {
  ref: string;
  until: number;
}

const idOf = (o: TicketOwner) => [o.adapter, o.tenant, o.kind, o.key].join('\u0000');

/** Ticket ids in memory; each call runs to completion synchronously (its atomic step). */
export class MemoryTickets implements TicketStore {
  private readonly held = new Map<string, Held>();

  constructor(
    private readonly clock: Clock,
    private readonly assertOpen: () => void,
  ) {}

  async find(owner: TicketOwner, keepMs: number) {
    this.assertOpen();
    const now = this.clock.now();
    const h = this.held.get(idOf(owner));
    if (!h || h.until <= now) return null;
    h.until = now + keepMs;
    return h.ref;
  }

  async claim(owner: TicketOwner, ref: string, keepMs: number) {
    this.assertOpen();
    const now = this.clock.now();
    const id = idOf(owner);
    const h = this.held.get(id);
    const winner = h && h.until > now ? h.ref : ref;
    this.held.set(id, { ref: winner, until: now + keepMs });
    return winner;
  }

  async forget(owner: TicketOwner, ref: string) {
    this.assertOpen();
    const id = idOf(owner);
    if (this.held.get(id)?.ref === ref) this.held.delete(id);
  }

  sweep(batch: number): number {
    const now = this.clock.now();
    return sweepMap(this.held, batch, (h) => h.until <= now);
  }
}
