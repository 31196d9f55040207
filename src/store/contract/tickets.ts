import type { OutboxKind } from '../../core/outbox.js';

/**
 * The tickets facet: which ticket a receiver opened for a key. Some receivers
 * can only find a ticket by searching, and their search may lag behind their
 * writes (Jira Cloud's is eventually consistent): an update that searched
 * straight after its create would find nothing and open a second ticket.
 * The receiver's id for the ticket is kept here instead, beside the
 * decisions, so a lookup reads what onceonly itself recorded.
 */

/** Whose ticket: one adapter's ticket for one key of one tenant. */
export interface TicketOwner {
  adapter: string;
  tenant: string;
  kind: OutboxKind;
  key: string;
}

/**
 * How long a ticket id is kept after its last use. Long enough that a fault
 * coming back after months still finds its ticket; after it the adapter falls
 * back to searching the receiver, whose index has long caught up by then.
 */
export const TICKET_MEMORY_MS = 180 * 86_400_000;

export interface TicketStore {
  /** The live ticket id of `owner`, or null; a hit keeps it for another `keepMs`. */
  find(owner: TicketOwner, keepMs: number): Promise<string | null>;
  /**
   * One atomic step: when `owner` has no live ticket id, records `ref` for
   * `keepMs` and answers it; otherwise answers the live one, unchanged but
   * kept another `keepMs`. Two adapters that each opened a ticket for the same
   * key and claim at once get the same answer: the winner's.
   */
  claim(owner: TicketOwner, ref: string, keepMs: number): Promise<string>;
  /** Forgets `owner`'s ticket id while it is still `ref` (the receiver no longer has that ticket). */
  forget(owner: TicketOwner, ref: string): Promise<void>;
}
