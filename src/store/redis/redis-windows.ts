import type { OutboxPayload } from '../../core/outbox.js';
import type { WindowClaim, WindowStore } from '../contract/index.js';
import type { RedisConnection } from './connection.js';
import type { KeyLayout } from './keys.js';
import { outboxArgs } from './redis-incidents.js';
import { scripts } from './scripts.js';
import { adoptSets } from './adopt-sets.js';
import type { ShardMigration } from './shard-migration.js';

/** Windowed claims on Redis. */
export class RedisWindows implements WindowStore {
  constructor(
    private readonly conn: RedisConnection,
    private readonly k: KeyLayout,
    private readonly migration: ShardMigration,
  ) {}

  /** SET NX PX and the outbox entry (or a repeat's re-queue), in one script on the server's clock. */
  async claim(tenant: string, key: string, ttlMs: number, outbox?: OutboxPayload): Promise<WindowClaim> {
    this.migration.unmoved(await this.migration.ready(adoptSets.window(tenant, key)));
    const k = this.k.deliveryKeysFor(tenant, key);
    const reply = Number(
      await this.conn.evalScript(
        scripts.claimWindow,
        [this.k.windowKey(tenant, key), this.k.outboxKeyFor(tenant, key), this.k.failingKey('violation', tenant, key), k.due],
        [ttlMs, ...outboxArgs(tenant, key, outbox), k.tag],
      ),
    );
    return reply === 1 ? 'claimed' : reply === 2 ? 'requeued' : 'repeat';
  }
}
