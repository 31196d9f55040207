import type { RedisConnection } from './connection.js';
import type { AdoptSet } from './adopt-sets.js';
import { adoptedKey, type KeyLayout, MIGRATING_KEY, shardTagOf } from './keys.js';
import { scripts } from './scripts.js';

/** How long a marker outlives the old copy it stands for, and the least it lives at all. */
export const MARKER_GRACE_MS = 10 * 60_000;
/** How often a replica in a shard move asks whether it is over. */
const SETTLE_CHECK_MS = 5000;
/** Keys this replica knows were adopted; forgotten past this many (asking Redis again is only slower). */
const KNOWN_MAX = 100_000;

/**
 * A replica's side of a shard move (`onceonly migrate-shards`), used only by
 * the layout seam (layout-seam.ts). While one runs, the layout
 * knows the count it moves from (`previous`), and every operation first
 * adopts its record from the old layout: a marker in the new shard says
 * whether that was done; if not, the old shard is frozen and read in one step
 * (adopt-read.lua: after it no caller on the old count writes there again, so
 * the read is final) and written into the new shard once (adopt-write.lua:
 * never over a key the new layout already has, never twice). Concurrent
 * adopters of one key race only inside adopt-write, which is atomic, so no
 * key is ever live in both layouts and no fault is created twice.
 */
export class Adopter {
  private readonly known = new Set<string>();
  private checkedAt = 0;

  constructor(
    private readonly conn: RedisConnection,
    private readonly layout: KeyLayout,
  ) {}

  /** Adopts a record's keys from the old layout if a move runs and they have not been; answers how many it copied. */
  async adopt(set: AdoptSet): Promise<number> {
    const previous = this.layout.previous;
    if (!previous) return 0;
    await this.settleIfOver();
    if (!this.layout.previous) return 0;
    const now = set.keys(this.layout);
    const old = set.keys(previous);
    const first = now[0]![0];
    // Same shard in both layouts: the same key names, nothing moves.
    if (shardTagOf(first) === shardTagOf(old[0]![0]) || this.known.has(first)) return 0;
    const marker = adoptedKey(first);
    let copied = 0;
    if (Number(await this.conn.send(marker, ['EXISTS', marker])) === 0) {
      const read = (await this.conn.evalScript(
        scripts.adoptRead,
        old.map(([k]) => k),
        [previous.shards, this.layout.shards, ...old.map(([, m]) => m)],
      )) as Array<string | number>;
      // adopt-read answers three values a key (type, value, pttl), as adopt-write takes them.
      const index = set.index ?? { kind: '', member: '' };
      copied = Number(
        await this.conn.evalScript(
          scripts.adoptWrite,
          [`${shardTagOf(first)}:${index.kind || 'lv'}`, ...now.map(([k]) => k)],
          [index.member, MARKER_GRACE_MS, index.kind, ...read],
        ),
      );
    }
    if (this.known.size >= KNOWN_MAX) this.known.clear();
    this.known.add(first);
    return copied;
  }

  /** Moves to the count a frozen shard named (its OOMOVED answer), keeping the old one to adopt from. */
  movedTo(to: number) {
    if (to === this.layout.shards) return;
    this.layout.moveTo(to);
    this.known.clear();
    this.checkedAt = performance.now();
  }

  /** Reads whether a move runs (at start): the count the keys move from, recorded by `migrate-shards`. */
  async begin(): Promise<void> {
    const from = await this.conn.send(MIGRATING_KEY, ['GET', MIGRATING_KEY]);
    if (from !== null && from !== undefined && Number(from) !== this.layout.shards) this.layout.moveTo(this.layout.shards, Number(from));
    this.checkedAt = performance.now();
  }

  /** `migrate-shards` removes its record when every old key was adopted; from then on the old layout is not read. */
  async settleIfOver() {
    if (performance.now() - this.checkedAt < SETTLE_CHECK_MS) return;
    this.checkedAt = performance.now();
    if ((await this.conn.send(MIGRATING_KEY, ['GET', MIGRATING_KEY])) === null) {
      this.layout.settled();
      this.known.clear();
    }
  }
}

/** A call made on a shard count the keys have moved from: it is made again on `count`. */
export class ShardsMovedError extends Error {
  readonly code = 'shards_moved';
  constructor(readonly count: number) {
    super(`OOMOVED ${count}`);
    this.name = 'ShardsMovedError';
  }
}

/** What a frozen shard answers, made here for a call that must be made again on `count`. */
export const movedError = (count: number) => new ShardsMovedError(count);

/**
 * The count to move to, from our own error or from a script's reply: a frozen
 * shard answers OOMOVED and the count (lua/lib/layout.lua), the reply's first
 * word its code as in Redis's own MOVED.
 */
export function movedTarget(err: unknown): number | null {
  if (err instanceof ShardsMovedError) return err.count;
  const m = err instanceof Error ? /^OOMOVED (\d+)/.exec(err.message) : null;
  return m ? Number(m[1]) : null;
}
