import type { OutboxPayload } from '../../core/outbox.js';
import type { Origin } from './ledger.js';

/** What a windowed claim did: claimed it, found it live, or found it live with a failing delivery it re-queued. */
export type WindowClaim = 'claimed' | 'repeat' | 'requeued';

/** The windows facet: one claim per key and time window (SPC violations). */
export interface WindowStore {
  /**
   * `claimed` for the first claim of the key while it is live (ttlMs),
   * `repeat` for a repeat, `requeued` for a repeat that found failing
   * deliveries of the key (retrying or dead) and put them back in the queue,
   * due now, instead of suppressing. One atomic step, which also writes a
   * `create` outbox entry when it claimed and `outbox` is given.
   */
  claim(tenant: string, key: string, ttlMs: number, outbox?: OutboxPayload, origin?: Origin): Promise<WindowClaim>;
}
