import type { OutboxPayload } from '../../core/outbox.js';
import type { WindowClaim, WindowStore } from '../contract/index.js';
import type { RedisConnection } from './connection.js';
import { outboxArgs } from './redis-incidents.js';
import { scripts } from './scripts.js';
import { adoptSets } from './adopt-sets.js';
import type { LayoutSeam } from './layout-seam.js';

/** Windowed claims on Redis. */
export class RedisWindows implements WindowStore {
  private readonly conn: RedisConnection;

  constructor(private readonly l: LayoutSeam) {
    this.conn = l.conn;
  }

  /** SET NX PX and the outbox entry (or a repeat's re-queue), in one script on the server's clock. */
  async claim(tenant: string, key: string, ttlMs: number, outbox?: OutboxPayload): Promise<WindowClaim> {
    const [keys, tag] = await this.l.at(adoptSets.window(tenant, key), (l) => {
      const d = l.deliveryKeysFor(tenant, key);
      return [[l.windowKey(tenant, key), l.outboxKeyFor(tenant, key), l.failingKey('violation', tenant, key), d.due], d.tag] as [string[], string];
    });
    const reply = Number(await this.conn.evalScript(scripts.claimWindow, keys, [ttlMs, ...outboxArgs(tenant, key, outbox), tag]));
    return reply === 1 ? 'claimed' : reply === 2 ? 'requeued' : 'repeat';
  }
}
