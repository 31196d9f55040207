import type { OutboxPayload } from '../../core/outbox.js';
import type { WindowClaim, WindowStore } from '../contract/index.js';
import type { RedisConnection } from './connection.js';
import { deliveryKeys, failingKey, outboxKeyFor, shardOf, windowKey } from './keys.js';
import { outboxArgs } from './redis-incidents.js';
import { scripts } from './scripts.js';

/** Windowed claims on Redis. */
export class RedisWindows implements WindowStore {
  constructor(private readonly conn: RedisConnection) {}

  /** SET NX PX and the outbox entry (or a repeat's re-queue), in one script on the server's clock. */
  async claim(tenant: string, key: string, ttlMs: number, outbox?: OutboxPayload): Promise<WindowClaim> {
    const k = deliveryKeys(shardOf(tenant, key));
    const reply = Number(
      await this.conn.evalScript(
        scripts.claimWindow,
        [windowKey(tenant, key), outboxKeyFor(tenant, key), failingKey('violation', tenant, key), k.due],
        [ttlMs, ...outboxArgs(tenant, key, outbox), k.tag],
      ),
    );
    return reply === 1 ? 'claimed' : reply === 2 ? 'requeued' : 'repeat';
  }
}
