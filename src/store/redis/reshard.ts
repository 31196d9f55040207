import type { RedisConnection } from './connection.js';
import { type AdoptSet, adoptSets } from './adopt-sets.js';
import { type KeyLayout, LAYOUT_KEY, MIGRATING_KEY, movedKey, shardTagOf, tenantIndexKey, unLp } from './keys.js';
import { RedisStore } from './redis-store.js';
import { scripts } from './scripts.js';

/** What `migrate-shards` did. */
export interface ShardMove {
  from: number;
  to: number;
  /** started (or resumed) a shard move; `recorded`: nothing was laid out yet; `same`: already at that count */
  state: 'started' | 'resumed' | 'recorded' | 'same';
  /** records looked at in the old layout, by kind */
  records: Record<string, number>;
  /** keys copied into the new layout (the rest were there already, adopted by a replica, or stayed in their shard) */
  copied: number;
  /** old copies deleted */
  removed: number;
}

/** Length-prefixed by UTF-8 bytes (keys.ts lpBytes), back into its parts. */
function unLpBytes(text: string): string[] | null {
  const b = Buffer.from(text);
  const parts: string[] = [];
  for (let i = 0; i < b.length; ) {
    const dot = b.indexOf(0x2e, i);
    const len = dot > i ? b.subarray(i, dot).toString() : '';
    if (!/^\d+$/.test(len) || dot + 1 + Number(len) > b.length) return null;
    parts.push(b.subarray(dot + 1, dot + 1 + Number(len)).toString());
    i = dot + 1 + Number(len);
  }
  return parts;
}

const colonPair = (rest: string): [string, string] | null => {
  const i = rest.indexOf(':');
  return i > 0 ? [rest.slice(0, i), rest.slice(i + 1)] : null;
};

/**
 * The per-shard key kinds a shard move leaves where they are, and why. Every
 * kind `keys.ts` builds is either carried (`recordOf` finds its record) or
 * here: `test/unit/shard-move-kinds.test.ts` builds every key the layout can
 * and holds it to that, so a new kind cannot be left out of the move unseen.
 */
export const STAYING: Readonly<Record<string, string>> = {
  o: "a shard's outbox: drained where it is (every old shard is a shard of the new count)",
  q: 'delivery state, drained where it is',
  a: 'delivery state, drained where it is',
  dl: 'delivery state, drained where it is',
  h: 'delivery state, drained where it is',
  x: 'delivery state, drained where it is',
  kf: "delivery state, drained where it is (a key's failing deliveries)",
  ko: "delivery state, drained where it is (a key's order, read across the move by layout-seam.ts)",
  lv: 'an index, rebuilt by the records adopted into the new shard',
  f: 'an index, rebuilt by the records adopted into the new shard',
  ti: 'an index, rebuilt by the records adopted into the new shard',
  tf: 'an index, rebuilt by the records adopted into the new shard',
  tl: 'an index, rebuilt by the records adopted into the new shard',
  r: "a journal-replay marker: its replay's outcome, kept in the shard that replayed it",
  hb: "a tenant's history bytes in one shard: a list adopted into the new shard is counted there at its next append, and the old shard's count gives a list back when it lapses",
  hx: "when each list a tenant's history count in one shard holds lapses (see hb)",
  mv: "the move's own freeze marker",
  ad: "the move's own adopted marker",
};

/** The record a key of the old layout belongs to (its kind, an id, its set), or null when it is not carried. */
export function recordOf(l: KeyLayout, key: string): { kind: string; id: string; set: AdoptSet } | null {
  const m = /^\{oo:\d+\}:([a-z]+):(.*)$/s.exec(key);
  if (!m) return null;
  const [, type, rest] = m as unknown as [string, string, string];
  const of = (kind: string, parts: string[] | null, make: (p: string[]) => AdoptSet, n: number) =>
    parts && parts.length === n ? { kind, id: `${kind}\u0000${parts.join('\u0000')}`, set: make(parts) } : null;
  switch (type) {
    case 'i':
    case 'ia':
    case 'k':
    case 'u':
    case 'e':
    case 'c':
      return of('incident', colonPair(rest), ([t, k]) => adoptSets.incident(l, t!, k!), 2);
    case 'w':
      return of('window', colonPair(rest), ([t, k]) => adoptSets.window(t!, k!), 2);
    case 'd':
    case 'b':
      return of('device', unLp(rest), ([t, d]) => adoptSets.device(l, t!, d!), 2);
    case 's': {
      const at = rest.lastIndexOf(':');
      const parts = at > 0 ? unLp(rest.slice(0, at)) : null;
      return of('seen', parts && [...parts, rest.slice(at + 1)], ([t, d, boot, seq]) => adoptSets.seen(t!, d!, boot!, Number(seq)), 4);
    }
    case 'tk':
      return of(
        'ticket',
        unLpBytes(rest),
        ([adapter, tenant, kind, k]) => adoptSets.ticket({ adapter: adapter!, tenant: tenant!, kind: kind as 'incident', key: k! }),
        4,
      );
    case 'g':
      return of('group', unLp(rest), ([t, g]) => adoptSets.group(t!, g!), 2);
    case 'gm':
      return of('member', unLpBytes(rest), ([t, k]) => adoptSets.member(t!, k!), 2);
    case 'fl':
      return of('flap', unLpBytes(rest), ([t, k]) => adoptSets.flap(t!, k!), 2);
    case 'hi':
      return of('history', unLpBytes(rest), ([t, k]) => adoptSets.history(t!, k!), 2);
    case 'rq':
      return of('request', unLpBytes(rest), ([t, k]) => adoptSets.request(t!, k!), 2);
    case 'n': {
      // A counter outlives its record (30 days): carried with the set of its kind, even alone.
      const p = unLpBytes(rest);
      if (p?.length !== 4) return null;
      const [kind, tenant, k] = p as [string, string, string];
      if (kind === 'incident') return of('incident', [tenant, k], ([t, x]) => adoptSets.incident(l, t!, x!), 2);
      if (kind === 'violation') return of('window', [tenant, k], ([t, x]) => adoptSets.window(t!, x!), 2);
      if (kind === 'event') return of('device', [tenant, k], ([t, x]) => adoptSets.device(l, t!, x!), 2);
      if (kind === 'group') return of('group', [tenant, k], ([t, x]) => adoptSets.group(t!, x!), 2);
      return null;
    }
    default:
      // The kinds that stay where they are (STAYING says why), or a key of no kind.
      return null;
  }
}

/** Records adopted at once. */
const CONCURRENCY = 32;

/** Why a shard move was refused before it changed anything: its code, from the script's reply. */
export class ShardMoveRefusedError extends Error {
  constructor(
    readonly code: 'move_running' | 'shards_only_grow',
    message: string,
  ) {
    super(message);
    this.name = 'ShardMoveRefusedError';
  }

  /** The refusal a layout-move reply carries (its first word is the code), or null for any other error. */
  static from(err: unknown): ShardMoveRefusedError | null {
    const m = err instanceof Error ? /^(OOMIGRATING|OOSHRINK) (.*)$/s.exec(err.message) : null;
    if (!m) return null;
    return new ShardMoveRefusedError(m[1] === 'OOMIGRATING' ? 'move_running' : 'shards_only_grow', m[2]!);
  }
}

/**
 * Moves the keys of a Redis to more shards while replicas keep serving:
 * records the new count (the old one beside it), freezes every old shard
 * (a replica still on the old count is answered OOMOVED there and moves to
 * the new count on its own), adopts every record the old layout holds into
 * the new one, exactly as a replica adopts a record it meets first, deletes
 * the old copies, and ends the move. Run again, it resumes.
 */
export async function migrateShards(conn: RedisConnection, to: number, progress: (line: string) => void = () => {}): Promise<ShardMove> {
  const [fromText, state] = (await conn.evalScript(scripts.layoutMove, [LAYOUT_KEY, MIGRATING_KEY], [to, to]).catch((err: unknown) => {
    throw ShardMoveRefusedError.from(err) ?? err;
  })) as [string, ShardMove['state']];
  const from = Number(fromText);
  const move: ShardMove = { from, to, state, records: {}, copied: 0, removed: 0 };
  if (state === 'recorded' || state === 'same') return move;
  progress(`${state === 'started' ? 'moving' : 'resuming the move of'} the keys from ${from} to ${to} shards`);
  // Every old shard frozen at once: from here no replica on the old count writes anywhere.
  await Promise.all(Array.from({ length: from }, (_, s) => conn.send(movedKey(s, from), ['SET', movedKey(s, from), String(to), 'NX'])));
  const store = new RedisStore(conn, 'redis', { shards: to });
  const layout = store.layout;
  layout.moveTo(to, from);
  const previous = layout.previous!;

  const sets = new Map<string, { kind: string; set: AdoptSet }>();
  for (const key of await conn.scan('{oo:*', Number.MAX_SAFE_INTEGER)) {
    const shard = Number(/^\{oo:(\d+)\}/.exec(key)?.[1] ?? NaN);
    if (!(shard < from)) continue;
    const r = recordOf(previous, key);
    if (r && !sets.has(r.id)) sets.set(r.id, r);
  }
  progress(`${sets.size} records in the old layout`);
  const queue = [...sets.values()];
  const worker = async () => {
    for (let r = queue.pop(); r; r = queue.pop()) {
      move.records[r.kind] = (move.records[r.kind] ?? 0) + 1;
      const oldKeys = r.set.keys(previous);
      const newKeys = r.set.keys(layout);
      const oldTag = shardTagOf(oldKeys[0]![0]);
      if (oldTag === shardTagOf(newKeys[0]![0])) continue;
      const copied = await store.seam.adoptNow(r.set);
      // Adopted (the marker in the new shard says so): the old copies are stale and go, with their index entries.
      const stale = oldKeys.filter(([, mode]) => mode === 'd').map(([k]) => k);
      const removed = Number(await conn.send(stale[0]!, ['DEL', ...stale]));
      move.copied += copied;
      move.removed += removed;
      if (r.set.index) {
        const index = `${oldTag}:${r.set.index.kind}`;
        await conn.send(index, ['ZREM', index, r.set.index.member]);
      }
      for (const kind of r.set.listed?.kinds ?? []) {
        const index = tenantIndexKey(oldTag, kind, r.set.listed!.tenant);
        await conn.send(index, ['ZREM', index, r.set.listed!.member]);
      }
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  await conn.send(MIGRATING_KEY, ['DEL', MIGRATING_KEY]);
  return move;
}
