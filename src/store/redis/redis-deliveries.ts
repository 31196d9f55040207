import { randomUUID } from 'node:crypto';
import {
  COUNTER_MEMORY_MS,
  SWEEP_BATCH,
  MAX_ATTEMPTS_KEPT,
  MAX_ERROR_CHARS,
  type Delivery,
  type DeliveryBacklog,
  type DeliveryNear,
  type DeliveryStore,
  type FoldOutcome,
  type Settlement,
} from '../contract/index.js';
import type { RedisConnection } from './connection.js';
import type { KeyLayout } from './keys.js';
import { fieldMap, outboxEntryOf } from './fields.js';
import { scripts } from './scripts.js';
import type { LayoutSeam } from './layout-seam.js';

/** A public id is `S:member`: the shard, then streamId.adapter (`@group`: onceonly's own group step, a name no config can give). */
function parseId(id: string, shards: number): { shard: number; member: string } | null {
  const m = /^(\d{1,5}):(\d+-\d+\.@?[A-Za-z0-9_-]+)$/.exec(id);
  if (!m || Number(m[1]) >= shards) return null;
  return { shard: Number(m[1]), member: m[2]! };
}

function toDelivery(shard: number, member: string, flat: string[]): Delivery {
  const f = fieldMap(flat);
  const entry = outboxEntryOf(f);
  // cjson writes an empty table as {}; attempts are only ever appended, so that means none.
  const attempts = JSON.parse(f.attempts ?? '[]') as Delivery['attempts'] | Record<string, never>;
  return {
    id: `${shard}:${member}`,
    adapter: f.adapter!,
    entry,
    n: Number(f.n),
    retries: Number(f.retries),
    attempts: Array.isArray(attempts) ? attempts : [],
    status: f.status as Delivery['status'],
    lease: f.lease ?? '',
    ...(f.deadAt ? { deadAt: Number(f.deadAt) } : {}),
    ...(f.held ? { held: true } : {}),
  };
}

/** How soon a delivery waiting for its key's deliveries in its old shard (layout-seam.ts) is looked at again. */
const ORDER_RECHECK_MS = 1000;

/**
 * Delivery state on Redis: per shard, in the slot of that shard's outbox, so
 * every step is one Lua script on one node. A worker visits every shard per
 * pass (in parallel; on a cluster each goes to its own master).
 */
export class RedisDeliveries implements DeliveryStore {
  private keys: ReturnType<KeyLayout['allDeliveryKeys']>;

  private readonly conn: RedisConnection;
  private readonly layout: KeyLayout;

  constructor(private readonly l: LayoutSeam) {
    this.conn = l.conn;
    this.layout = l.keys;
    this.keys = this.layout.allDeliveryKeys();
  }

  /** Every shard's delivery keys, for the count in force: it can grow while the worker runs. */
  private get shards() {
    if (this.keys.length !== this.layout.shards) this.keys = this.layout.allDeliveryKeys();
    return this.keys;
  }

  /**
   * The shards a pass visits: every one, or (near) only the shards of the
   * keys named, so a pass woken by a few decisions costs a few scripts
   * rather than two per shard.
   */
  private visited(near: DeliveryNear | undefined): Array<[ReturnType<KeyLayout['allDeliveryKeys']>[number], number]> {
    const all = this.shards;
    if (!near || near.length === 0) return all.map((k, s) => [k, s]);
    const wanted = [...new Set(near.map((n) => this.layout.shardOf(n.tenant, n.key)))].filter((s) => s < all.length);
    return wanted.map((s) => [all[s]!, s]);
  }

  async fanOut(adapters: readonly string[], limit: number, near?: DeliveryNear) {
    const shards = this.visited(near);
    const per = Math.max(1, Math.ceil(limit / shards.length));
    const moved = await Promise.all(
      shards.map(([k]) => this.conn.evalScript(scripts.fanOut, [k.outbox, k.due, k.age], [k.tag, per, COUNTER_MEMORY_MS, ...adapters])),
    );
    return moved.reduce<number>((a, b) => a + Number(b), 0);
  }

  async leaseDue(owner: string, leaseMs: number, limit: number, near?: DeliveryNear) {
    const token = `${owner}:${randomUUID()}`;
    const shards = this.visited(near);
    const per = Math.max(1, Math.ceil(limit / shards.length));
    const replies = await Promise.all(
      shards.map(([k, s]) =>
        this.conn
          .evalScript(scripts.leaseDeliveries, [k.due], [k.tag, token, leaseMs, per])
          .then((r) => (r as Array<[string, string[]]>).map(([m, flat]) => toDelivery(s, m, flat))),
      ),
    );
    const due = replies.flat();
    // A key whose shard changed may still have deliveries in its old one (retrying there): its new
    // ones wait for them, held and looked at again, so they keep their order.
    const waiting = this.l.waitsForOldShards(due, (d) => parseId(d.id, this.layout.shards)?.shard ?? null);
    if (!waiting) return due;
    const waits = await waiting;
    const out: Delivery[] = [];
    for (const [i, d] of due.entries()) {
      if (!waits[i]) out.push(d);
      else await this.fold(d, ORDER_RECHECK_MS);
    }
    return out;
  }

  async fold(d: Delivery, holdMs: number | null): Promise<FoldOutcome> {
    const id = parseId(d.id, this.layout.shards);
    if (!id) return { kind: 'lost' };
    const k = this.shards[id.shard]!;
    const [kind, folded, flat] = (await this.conn.evalScript(
      scripts.foldDelivery,
      [k.due, k.age, k.delivery(id.member), k.held],
      [k.tag, id.member, d.lease, holdMs === null ? '' : Math.ceil(holdMs)],
    )) as [string, number, string[]?];
    if (kind === 'lost') return { kind };
    if (kind === 'ready') return { kind, folded: Number(folded), delivery: toDelivery(id.shard, id.member, flat!) };
    return { kind: kind as 'held' | 'dropped' | 'superseded', folded: Number(folded) };
  }

  async renew(d: Delivery, leaseMs: number) {
    const id = parseId(d.id, this.layout.shards);
    if (!id) return false;
    const k = this.shards[id.shard]!;
    return Number(await this.conn.evalScript(scripts.renewLease, [k.due, k.delivery(id.member)], [id.member, d.lease, Math.ceil(leaseMs)])) === 1;
  }

  async settle(d: Delivery, s: Settlement) {
    const id = parseId(d.id, this.layout.shards);
    if (!id) return false;
    const k = this.shards[id.shard]!;
    const reply = await this.conn.evalScript(
      scripts.settleDelivery,
      [k.due, k.age, k.dead, k.delivery(id.member), k.held],
      [
        id.member,
        d.lease,
        s.outcome,
        s.outcome === 'retry' ? Math.ceil(s.delayMs) : 0,
        s.outcome === 'delivered' ? '' : s.error.slice(0, MAX_ERROR_CHARS),
        MAX_ATTEMPTS_KEPT,
        s.outcome === 'retry' && s.floorMs !== undefined ? Math.ceil(s.floorMs) : 0,
      ],
    );
    return Number(reply) === 1;
  }

  async deadLetters(tenant: string | null, limit: number) {
    const replies = await Promise.all(
      this.shards.map((k, s) =>
        this.conn
          .evalScript(scripts.listDeadLetters, [k.dead], [k.tag, tenant ?? '', limit])
          .then((r) => (r as Array<[string, string[], number]>).map(([m, flat, waiting]) => ({ ...toDelivery(s, m, flat), waiting: Number(waiting) }))),
      ),
    );
    return replies
      .flat()
      .sort((a, b) => (a.deadAt ?? 0) - (b.deadAt ?? 0))
      .slice(0, limit);
  }

  async retryDeadLetter(tenant: string | null, id: string) {
    const p = parseId(id, this.layout.shards);
    if (!p) return false;
    const k = this.shards[p.shard]!;
    return Number(await this.conn.evalScript(scripts.retryDeadLetter, [k.delivery(p.member)], [k.tag, p.member, tenant ?? ''])) === 1;
  }

  async dropDeadLetter(tenant: string | null, id: string) {
    const p = parseId(id, this.layout.shards);
    if (!p) return false;
    const k = this.shards[p.shard]!;
    return Number(await this.conn.evalScript(scripts.dropDeadLetter, [k.delivery(p.member)], [k.tag, p.member, tenant ?? ''])) === 1;
  }

  async backlog(): Promise<DeliveryBacklog> {
    const replies = (await Promise.all(
      this.shards.map((k) => this.conn.evalScript(scripts.deliveryBacklog, [k.due, k.age, k.dead, k.outbox, k.held], [])),
    )) as Array<[number, number, string, string, number]>;
    let pending = 0;
    let dead = 0;
    let held = 0;
    let oldestAt: number | null = null;
    for (const [p, d, a, o, h] of replies) {
      pending += Number(p);
      dead += Number(d);
      held += Number(h);
      for (const at of [a, o]) if (at !== '' && (oldestAt === null || Number(at) < oldestAt)) oldestAt = Number(at);
    }
    return { pending, dead, oldestAt, held };
  }

  /** Every shard's dead letters past the retention, a batch per shard, each one script on its own node. */
  async sweepDeadLetters(retentionMs: number) {
    const gone = await Promise.all(this.shards.map((k) => this.conn.evalScript(scripts.sweepDeadLetters, [k.dead], [k.tag, retentionMs, SWEEP_BATCH])));
    return gone.reduce<number>((a, b) => a + Number(b), 0);
  }
}
