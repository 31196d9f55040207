import type { Delivery } from '../contract/index.js';
import type { RedisConnection } from './connection.js';
import type { AdoptSet } from './adopt-sets.js';
import { Adopter, movedError, movedTarget } from './adopter.js';
import { type KeyLayout, orderKey } from './keys.js';

/** How many moves one call follows: a shard move is one, and one may start while another ends. */
const MAX_MOVES = 3;

/**
 * Commands a facet may send outside a script: reads only. Every write is a
 * script, so the layout guard (lua/lib/layout.lua) refuses it on a shard a
 * move froze; a raw write would land where no replica looks any more.
 */
const READS = new Set(['GET', 'HMGET', 'HGETALL', 'LRANGE', 'ZRANGE', 'ZCOUNT', 'ZCARD', 'XRANGE', 'EXISTS']);

/** A raw command that writes, sent past the layout guard: a defect in the facet, never sent. */
export class UnguardedWriteError extends Error {
  readonly code = 'unguarded_write';
  constructor(command: string) {
    super(`${command} is not sent outside a script: every write goes through the layout guard (a Lua script)`);
    this.name = 'UnguardedWriteError';
  }
}

/**
 * The one seam between the Redis facets and where their keys are. A facet
 * names the record a call touches (adopt-sets.ts) and how it builds that
 * record's keys from a layout; the seam does the rest:
 *
 * - while the shard count changes (`onceonly migrate-shards`), adopts the
 *   record from the old count first, and builds the keys on the count it
 *   was adopted for, or makes the call again on the new one;
 * - hands the facets a connection on which every script carries the
 *   caller's shard count (the guard) and no raw command writes;
 * - makes a call again when a frozen shard answers that the count moved
 *   (`follow`), so a replica changes count with no restart and no error
 *   seen by its caller.
 *
 * No facet knows that the count can change: that is all here and in
 * adopter.ts.
 */
export class LayoutSeam {
  /** What facets send through: guarded scripts, and reads. */
  readonly conn: RedisConnection;
  private readonly adopter: Adopter;

  constructor(
    raw: RedisConnection,
    readonly keys: KeyLayout,
    private readonly onMoved?: (from: number, to: number) => void,
  ) {
    this.conn = {
      evalScript: (script, k, args) => raw.evalScript(script, k, [...args, keys.shards]),
      ping: () => raw.ping(),
      scan: (match, max) => raw.scan(match, max),
      close: () => raw.close(),
      send: (key, args) => {
        const command = String(args[0]).toUpperCase();
        if (!READS.has(command)) return Promise.reject(new UnguardedWriteError(command));
        return raw.send(key, args);
      },
    };
    this.adopter = new Adopter(this.conn, keys);
  }

  /**
   * Adopts the records a call touches (nothing to do unless the count is
   * changing) and answers the count they were adopted for: the call's keys
   * are built on that count (`on`) or not at all.
   */
  async pin(...records: AdoptSet[]): Promise<number> {
    const count = this.keys.shards;
    if (this.keys.previous) for (const r of records) await this.adopter.adopt(r);
    return count;
  }

  /** The keys `build` makes on `count`; a count that moved since `pin` makes the call again on the new one. */
  on<K>(count: number, build: (k: KeyLayout) => K): K {
    if (this.keys.shards !== count) throw movedError(this.keys.shards);
    return build(this.keys);
  }

  /** `pin` then `on`: the keys of the records a call touches, where they are now. */
  async at<K>(records: AdoptSet | readonly AdoptSet[], build: (k: KeyLayout) => K): Promise<K> {
    return this.on(await this.pin(...(Array.isArray(records) ? records : [records as AdoptSet])), build);
  }

  /** One record adopted now, whatever its marker says is done: `migrate-shards`'s own step. Answers the keys it copied. */
  adoptNow(record: AdoptSet): Promise<number> {
    return this.adopter.adopt(record);
  }

  /** At start: whether a shard move runs (the count the keys move from). */
  begin(): Promise<void> {
    return this.adopter.begin();
  }

  /**
   * Which of the deliveries just leased must wait: a delivery whose key
   * moved shard in a move that still runs, while its old shard has unsettled
   * deliveries of that key to that adapter (retrying there). Its new ones
   * wait for them, so they keep their order. Null, at once, when no move runs.
   */
  waitsForOldShards(due: readonly Delivery[], shardOf: (d: Delivery) => number | null): Promise<boolean[]> | null {
    if (!this.keys.previous) return null;
    return (async () => {
      // A replica that only delivers learns here, too, that the move is over.
      await this.adopter.settleIfOver();
      return Promise.all(due.map((d) => this.waitsForOldShard(d, shardOf(d))));
    })();
  }

  private async waitsForOldShard(d: Delivery, shard: number | null): Promise<boolean> {
    const previous = this.keys.previous;
    if (!previous || shard === null) return false;
    const e = d.entry;
    // The shard a key's outbox entries go to: a device's is its own (keys.ts deviceKeys).
    const old = previous.shardOf(e.tenant, e.kind === 'event' ? `\u0001${e.key}` : e.key);
    if (old === shard) return false;
    const order = orderKey(old, d.adapter, e.kind, e.tenant, e.key);
    return Number(await this.conn.send(order, ['ZCARD', order])) > 0;
  }

  /**
   * A facet whose calls follow a shard move: a call that meets a shard
   * frozen for its count (OOMOVED, answered before the script read or
   * wrote anything) moves the layout to the new count and is made again.
   */
  follow<T extends object>(facet: T): T {
    const moved = (to: number) => {
      const from = this.keys.shards;
      this.adopter.movedTo(to);
      if (from !== to) this.onMoved?.(from, to);
    };
    return new Proxy(facet, {
      get(target, prop, receiver) {
        const value: unknown = Reflect.get(target, prop, receiver);
        if (typeof value !== 'function') return value;
        return (...args: unknown[]) => {
          const call = (left: number): unknown => {
            const result: unknown = value.apply(target, args);
            if (!(result instanceof Promise)) return result;
            return result.catch((err: unknown) => {
              const to = movedTarget(err);
              if (to === null || left === 0) throw err;
              moved(to);
              return call(left - 1);
            });
          };
          return call(MAX_MOVES);
        };
      },
    });
  }
}
