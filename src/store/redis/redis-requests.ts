import type { RequestBegin, RequestStore, StoredAnswer } from '../contract/index.js';
import type { RedisConnection } from './connection.js';
import type { KeyLayout } from './keys.js';
import { scripts } from './scripts.js';
import { adoptSets } from './adopt-sets.js';
import type { ShardMigration } from './shard-migration.js';

/** A request record: the body hash, and the answer once there is one. */
interface Held {
  h: string;
  s?: number;
  c?: string;
  b?: string;
}

/** Idempotency-Keys on Redis: a string per key with its lifetime as a PX expiry. */
export class RedisRequests implements RequestStore {
  constructor(
    private readonly conn: RedisConnection,
    private readonly k: KeyLayout,
    private readonly migration: ShardMigration,
  ) {}

  private adopt(tenant: string, key: string) {
    return this.migration.ready(adoptSets.request(tenant, key));
  }

  /** GET, and SET … PX when absent, in one script. */
  async begin(tenant: string, key: string, bodyHash: string, leaseMs: number): Promise<RequestBegin> {
    this.migration.unmoved(await this.adopt(tenant, key));
    const held = await this.conn.evalScript(scripts.requestBegin, [this.k.requestKey(tenant, key)], [JSON.stringify({ h: bodyHash } satisfies Held), leaseMs]);
    if (held === null || held === undefined) return { state: 'new' };
    const r = JSON.parse(String(held)) as Held;
    if (r.s === undefined) return { state: 'in_flight', bodyHash: r.h };
    return { state: 'done', bodyHash: r.h, answer: { status: r.s, contentType: r.c ?? 'application/json', body: r.b ?? '' } };
  }

  /** One SET … PX: the answer replaces the in-flight record. */
  async finish(tenant: string, key: string, bodyHash: string, answer: StoredAnswer, keepMs: number): Promise<void> {
    this.migration.unmoved(await this.adopt(tenant, key));
    const k = this.k.requestKey(tenant, key);
    const held: Held = { h: bodyHash, s: answer.status, c: answer.contentType, b: answer.body };
    await this.conn.send(k, ['SET', k, JSON.stringify(held), 'PX', String(keepMs)]);
  }

  async abandon(tenant: string, key: string, bodyHash: string): Promise<void> {
    this.migration.unmoved(await this.adopt(tenant, key));
    await this.conn.evalScript(scripts.requestAbandon, [this.k.requestKey(tenant, key)], [bodyHash]);
  }
}
