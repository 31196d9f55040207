import { answerBytes, type KeptAnswer, REQUEST_MEMORY_MS, type RequestBegin, type RequestStore } from '../contract/index.js';
import type { RedisConnection } from './connection.js';
import { lpBytes, requestQuotaKeys } from './keys.js';
import { scripts } from './scripts.js';
import { adoptSets } from './adopt-sets.js';
import type { LayoutSeam } from './layout-seam.js';

/** A request record: the body hash, and the answer once there is one. */
interface Held {
  h: string;
  s?: number;
  c?: string;
  b?: string;
}

/** How long a tenant's bound is kept after its last write: past the longest any record it counts can live. */
const QUOTA_TTL_MS = REQUEST_MEMORY_MS + 3_600_000;

/**
 * Idempotency-Keys on Redis: a string per key with its lifetime as a PX
 * expiry, in the key's shard. The tenant's bound (its keys and their bytes)
 * is in a slot of the tenant's own, so it is a second step: counted before a
 * record is begun and before an answer is kept. A replica that dies between
 * the two leaves a key counted until its lease ends; never the other way.
 */
export class RedisRequests implements RequestStore {
  private readonly conn: RedisConnection;

  constructor(private readonly l: LayoutSeam) {
    this.conn = l.conn;
  }

  private keyOf(tenant: string, key: string) {
    return this.l.at(adoptSets.request(tenant, key), (k) => k.requestKey(tenant, key));
  }

  /** The tenant's bound counts the key (or says it is full), then GET, and SET … PX when absent, in one script. */
  async begin(tenant: string, key: string, bodyHash: string, leaseMs: number, maxKeys: number): Promise<RequestBegin> {
    const record = await this.keyOf(tenant, key);
    const counted = await this.conn.evalScript(scripts.requestReserve, requestQuotaKeys(tenant), [lpBytes(key), leaseMs, maxKeys, QUOTA_TTL_MS]);
    if (Number(counted) !== 1) return { state: 'full' };
    const held = await this.conn.evalScript(scripts.requestBegin, [record], [JSON.stringify({ h: bodyHash } satisfies Held), leaseMs]);
    if (held === null || held === undefined) return { state: 'new' };
    const r = JSON.parse(String(held)) as Held;
    if (r.s === undefined) return { state: 'in_flight', bodyHash: r.h };
    return { state: 'done', bodyHash: r.h, answer: { status: r.s, contentType: r.c ?? 'application/json', body: r.b ?? '' } };
  }

  /** The tenant's bound chooses the form, then one guarded SET … PX (request-keep.lua): the answer replaces the in-flight record. */
  async finish(tenant: string, key: string, bodyHash: string, answer: KeptAnswer, keepMs: number, maxBytes: number): Promise<'whole' | 'digest'> {
    const record = await this.keyOf(tenant, key);
    const kept =
      String(
        await this.conn.evalScript(scripts.requestSettle, requestQuotaKeys(tenant), [
          lpBytes(key),
          keepMs,
          answerBytes(answer.whole),
          answerBytes(answer.digest),
          maxBytes,
          QUOTA_TTL_MS,
        ]),
      ) === 'whole'
        ? 'whole'
        : 'digest';
    const a = answer[kept];
    const held: Held = { h: bodyHash, s: a.status, c: a.contentType, b: a.body };
    await this.conn.evalScript(scripts.requestKeep, [record], [JSON.stringify(held), keepMs]);
    return kept;
  }

  async abandon(tenant: string, key: string, bodyHash: string): Promise<void> {
    const freed = await this.conn.evalScript(scripts.requestAbandon, [await this.keyOf(tenant, key)], [bodyHash]);
    if (Number(freed) === 1) await this.conn.evalScript(scripts.requestRelease, requestQuotaKeys(tenant), [lpBytes(key)]);
  }
}
