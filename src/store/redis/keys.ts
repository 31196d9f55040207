import { createHash } from 'node:crypto';
import { DEFAULT_SHARDS, MAX_SHARDS } from '../../config/redis.js';

/**
 * Key layout. Every key carries a hash tag `{oo:S}` with S one of the
 * store's shards (`redis.shards`, default 64), so that all keys one script
 * touches share a hash slot (Redis Cluster refuses scripts whose keys span
 * slots), while the keyspace still spreads over the cluster's masters. The shard comes from the tenant and key, so the
 * record, its markers, its window and the outbox entries its decisions write
 * all go to one shard.
 *
 *   {oo:S}:i:TENANT:KEY         an incident record (S: the key's shard, of the store's shard count)
 *   {oo:S}:ia:TENANT:KEY        what the incident shows (hash: identity, latest; JSON), beside its record
 *   {oo:S}:r:TENANT:KEY:ENTRY   a reconcile marker (that journal entry's replay is done)
 *   {oo:S}:k:TENANT:KEY         an incident's acknowledgement marker (the episode's createdAt)
 *   {oo:S}:u:TENANT:KEY         an incident's last escalation step ("createdAt:step")
 *   {oo:S}:e:TENANT:KEY         an alert's last resolution (the episode's end, ms)
 *   {oo:S}:c:TENANT:KEY         when the key's last live episode was closed (ms), kept one TTL
 *   {oo:S}:lv                   the shard's live incidents (zset hash(tenant,key) → expiry ms):
 *                               what the live count reads, exactly, on the server's clock
 *
 *   {oo:S}:w:TENANT:KEY         a windowed claim (SPC violation)
 *   {oo:S}:d:DEV                a device's state (DEV = length-prefixed tenant and device)
 *   {oo:S}:b:DEV                the boots seen for a device
 *   {oo:S}:s:DEV:BOOT:SEQ       an event's seen-marker (expires after the retention)
 *   {oo:S}:o                    the shard's outbox (stream): incidents, violations, transitions
 *   {oo:S}:f                    the shard's freshness index (device → observed_at)
 *   {oo:S}:ti:LPB(tenant)       the tenant's incidents in the shard, by last arrival (its listing)
 *   {oo:S}:tf:LPB(tenant)       the tenant's devices in the shard, by observation (its listing)
 *   {oo:S}:tl                   the tenants that have such an index in the shard (the sweep's list)
 *
 * Delivery state (fanned out from the shard's outbox; M = streamId.adapter):
 *   {oo:S}:x:M                  one delivery (hash: the entry, n, retries, attempts, status, lease)
 *   {oo:S}:q                    due queue (zset M → due ms; a lease pushes it forward)
 *   {oo:S}:a                    age index (zset M → the entry's `at`, pending only)
 *   {oo:S}:dl                   dead letters (zset M → when it died)
 *   {oo:S}:h                    deliveries a mute holds now (set of M)
 *   {oo:S}:kf:LPB(kind,tenant,key)        the key's failing deliveries (set of M)
 *   {oo:S}:ko:LPB(adapter,kind,tenant,key) the key's unsettled deliveries to one adapter, in order (zset of M)
 *   {oo:S}:n:LPB(kind,tenant,key,action)  the key's n counter for Idempotency-Key
 *   {oo:S}:rq:LPB(tenant,key)             a producer's Idempotency-Key and its answer
 *   {oo:S}:tk:LPB(adapter,tenant,kind,key) the ticket id an adapter's receiver gave the key
 *   {oo:S}:fl:LPB(tenant,key)             the key's recent creates and closes (list of c|x + ms)
 *   {oo:S}:hb:LPB(tenant)                 the bytes each of the tenant's history lists in the shard holds ("" → their sum)
 *   {oo:S}:hx:LPB(tenant)                 when each of those lists lapses (zset list → ms)
 *   {oo:S}:g:LP(tenant,group)             a group of incidents (JSON), in the group key's shard
 *   {oo:S}:gm:LPB(tenant,member)          the group a member incident is in
 * (LPB: length-prefixed by UTF-8 bytes, as the Lua side computes it.)
 *
 * Silences, all in one slot (they are few, and a write must bump the version
 * in the same step):
 *   {oo:sil}:s:LPB(tenant,id)   one silence (JSON; deleted by Redis its retention after it ends)
 *   {oo:sil}:t:LPB(tenant)      the tenant's silences (zset key → end ms)
 *   {oo:sil}:all                every tenant's silences (zset key → end ms)
 *   {oo:sil}:v                  the silence version (a counter every write bumps)
 *   {oo:sil}:c                  each kept silence by the version its last write made (zset key → version)
 *
 * Inhibitors, all in one slot (a source's removal touches every group it is in):
 *   {oo:inh}:g:LPB(tenant,rule,tuple)   a rule's live sources with those `equal` values (zset source → expiry ms)
 *   {oo:inh}:s:LPB(tenant,source)       the groups a source is in (set)
 *
 * The layout: {oo:layout}:shards, the shard count the keys are written with;
 * {oo:layout}:from, while a shard move runs, the count they are moving from;
 * {oo:S}:mv:N, in each shard S of an old count N: the count its keys moved to
 * (a caller on N is refused there); {oo:S}:ad:KEY, beside a key of the new
 * layout: that key was adopted from the old layout (never adopt it twice).
 *
 * A tenant's Idempotency-Key bound, in a slot of the tenant's own (not
 * sharded: it counts the tenant's records across every shard, and does not
 * move with the shard count; T is 12 characters of a hash of the tenant):
 *   {oo:rq:T}:z:LPB(tenant)     the tenant's recorded keys (zset LPB(key) → expiry ms)
 *   {oo:rq:T}:b:LPB(tenant)     their kept answers' bytes (hash LPB(key) → bytes)
 *   {oo:rq:T}:n:LPB(tenant)     the sum of those bytes
 *
 * Heartbeats, all in one slot (they are few, and come from the config):
 *   {oo:hb}:LPB(tenant)         the tenant's heartbeats (hash name → "since,last ping,claimed miss", ms)
 *
 * The shard count S is part of the stored layout: a key's shard is FNV-1a of
 * its tenant and key mod S, so changing S moves almost every key. Choosing
 * it, and changing it safely: docs/scaling.md.
 */

function fnv1a(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}

/** Length-prefixed, so no two (tenant, device, …) tuples can make the same key. */
export function lp(...parts: string[]): string {
  return parts.map((p) => `${p.length}.${p}`).join('');
}

/** The parts of an `lp` string, or null when it is not one. */
export function unLp(text: string): string[] | null {
  const parts: string[] = [];
  for (let i = 0; i < text.length; ) {
    const dot = text.indexOf('.', i);
    const n = Number(text.slice(i, dot));
    if (dot < 0 || !/^\d+$/.test(text.slice(i, dot)) || dot + 1 + n > text.length) return null;
    parts.push(text.slice(dot + 1, dot + 1 + n));
    i = dot + 1 + n;
  }
  return parts;
}

/** Length-prefixed by UTF-8 bytes: the same string Lua's `#` makes. */
export const lpBytes = (...parts: string[]) => parts.map((p) => `${Buffer.byteLength(p)}.${p}`).join('');

/** The parts of an `lpBytes` string, or null when it is not one. */
export function unLpBytes(text: string): string[] | null {
  const b = Buffer.from(text);
  const parts: string[] = [];
  for (let i = 0; i < b.length; ) {
    const dot = b.indexOf(0x2e, i);
    const head = dot < 0 ? '' : b.subarray(i, dot).toString();
    const n = Number(head);
    if (!/^\d+$/.test(head) || dot + 1 + n > b.length) return null;
    parts.push(b.subarray(dot + 1, dot + 1 + n).toString());
    i = dot + 1 + n;
  }
  return parts;
}

/** A tenant's Idempotency-Key bound: its keys, their answers' bytes, and their sum (KEYS of the request-quota scripts). */
export function requestQuotaKeys(tenant: string): string[] {
  const t = `{oo:rq:${createHash('sha256').update(tenant).digest().subarray(0, 9).toString('base64url')}}`;
  const id = lpBytes(tenant);
  return [`${t}:z:${id}`, `${t}:b:${id}`, `${t}:n:${id}`];
}

/**
 * A tenant's history tally in the shard of one of its history lists
 * (lua/history-append.lua): the bytes each of its lists there holds, and
 * when each lapses. Beside the list, so one script keeps both.
 */
export function historyTallyKeys(listKey: string, tenant: string): [string, string] {
  const tag = shardTagOf(listKey);
  const id = lpBytes(tenant);
  return [`${tag}:hb:${id}`, `${tag}:hx:${id}`];
}

/** The delivery keys of shard S. */
export function deliveryKeys(shard: number) {
  const tag = `{oo:${shard}}`;
  return {
    tag,
    outbox: `${tag}:o`,
    due: `${tag}:q`,
    age: `${tag}:a`,
    dead: `${tag}:dl`,
    held: `${tag}:h`,
    delivery: (member: string) => `${tag}:x:${member}`,
  };
}

/** A tenant's listing index in the shard of `tag`: its incidents (`ti`, by last arrival) or its devices (`tf`, by observation). */
export const tenantIndexKey = (tag: string, kind: 'ti' | 'tf', tenant: string) => `${tag}:${kind}:${lpBytes(tenant)}`;

/** A key's unsettled deliveries to one adapter in shard S, oldest first (written by fan-out.lua). */
export const orderKey = (shard: number, adapter: string, kind: string, tenant: string, key: string) =>
  `{oo:${shard}}:ko:${lpBytes(adapter, kind, tenant, key)}`;

/**
 * Every key whose place depends on the shard count, for a store with
 * `shards` shards. The facets of one store share one layout.
 */
export function keyLayout(shards: number = DEFAULT_SHARDS) {
  checkShardCount(shards);
  // The count can change while the store runs: a move to more shards
  // (docs/scaling.md) moves every replica to the new count when it first
  // meets a shard frozen for it. Every key below is computed from `n` at call time.
  let n = shards;
  let previous: KeyLayout | null = null;
  const shardOf = (tenant: string, key: string): number => fnv1a(`${tenant}\u0000${key}`) % n;
  const tag = (tenant: string, key: string) => `{oo:${shardOf(tenant, key)}}`;
  return {
    get shards() {
      return n;
    },
    /** While a shard move runs: the layout the keys were written in before, to adopt them from. */
    get previous(): KeyLayout | null {
      return previous;
    },
    /** Moves to `to` shards; `from` (the count before) stays readable as `previous` until `settled`. */
    moveTo(to: number, from: number = n) {
      checkShardCount(to);
      previous = from === to ? null : keyLayout(from);
      n = to;
    },
    /** The move is over: every record was adopted, nothing is read from the old layout any more. */
    settled() {
      previous = null;
    },
    shardOf,
    /** An incident record. */
    incidentRecordKey: (tenant: string, key: string) => `${tag(tenant, key)}:i:${tenant}:${key}`,
    /**
     * What the incident shows (GET /v1/incidents/{key}): its create's identity
     * and its latest arrival's summary and labels, kept beside the record with
     * its lifetime. A key of its own, not a part of the record, so the record
     * stays as a replica of the version before reads it.
     */
    incidentShownKey: (tenant: string, key: string) => `${tag(tenant, key)}:ia:${tenant}:${key}`,
    /**
     * The live-incident index of the shard that holds this tenant's key, and the
     * key's member in it: 12 characters of a hash rather than the key itself,
     * since every live incident has one and a sorted-set entry's cost grows with
     * its member. 72 bits: the chance that any two of 10^7 live keys share a
     * member is below 10^-9, and if they did the count would be one short; no
     * decision reads the index.
     */
    liveIndex(tenant: string, key: string) {
      const member = createHash('sha256').update(lpBytes(tenant, key)).digest().subarray(0, 9).toString('base64url');
      return { key: `${tag(tenant, key)}:lv`, member };
    },
    resolutionKey: (tenant: string, key: string) => `${tag(tenant, key)}:e:${tenant}:${key}`,
    ackMarkerKey: (tenant: string, key: string) => `${tag(tenant, key)}:k:${tenant}:${key}`,
    escalationKey: (tenant: string, key: string) => `${tag(tenant, key)}:u:${tenant}:${key}`,
    closedKey: (tenant: string, key: string) => `${tag(tenant, key)}:c:${tenant}:${key}`,
    reconcileMarkerKey: (tenant: string, key: string, journalId: string) => `${tag(tenant, key)}:r:${tenant}:${key}:${journalId}`,
    deviceKeys(tenant: string, device: string, boot: string, sequence: number) {
      const dev = lp(tenant, device);
      const t = tag(tenant, `\u0001${device}`);
      return {
        member: dev,
        device: `${t}:d:${dev}`,
        seen: `${t}:s:${dev}${lp(boot)}:${sequence}`,
        boots: `${t}:b:${dev}`,
        outbox: `${t}:o`,
        freshness: `${t}:f`,
      };
    },
    /** A tenant's own listing index of one kind in every shard (lua/lib/listing.lua, apply-event.lua write them). */
    tenantIndexes: (kind: 'ti' | 'tf', tenant: string) => Array.from({ length: n }, (_, s) => tenantIndexKey(`{oo:${s}}`, kind, tenant)),
    /** One kind of per-shard key, for every shard. */
    allShards: (kind: 'o' | 'f' | 'lv' | 'ti' | 'tl') => Array.from({ length: n }, (_, s) => `{oo:${s}}:${kind}`),
    /** The delivery keys of every shard, by shard. */
    allDeliveryKeys: () => Array.from({ length: n }, (_, s) => deliveryKeys(s)),
    /** The delivery keys of the shard that holds this tenant's key. */
    deliveryKeysFor: (tenant: string, key: string) => deliveryKeys(shardOf(tenant, key)),
    /** The set of a key's failing deliveries, in the key's own shard. */
    failingKey: (kind: string, tenant: string, key: string) => `${tag(tenant, key)}:kf:${lpBytes(kind, tenant, key)}`,
    /** A producer's Idempotency-Key and the answer it got. */
    requestKey: (tenant: string, key: string) => `${tag(tenant, key)}:rq:${lpBytes(tenant, key)}`,
    /** The ticket id an adapter's receiver gave a key, in the key's own shard. */
    ticketKey: (adapter: string, tenant: string, kind: string, key: string) => `${tag(tenant, key)}:tk:${lpBytes(adapter, tenant, kind, key)}`,
    /** A group (in the group key's shard, beside the outbox its commits write) and a member's group (in the member's). */
    groupKeys: {
      group: (tenant: string, groupKey: string) => `${tag(tenant, groupKey)}:g:${lp(tenant, groupKey)}`,
      member: (tenant: string, member: string) => `${tag(tenant, member)}:gm:${lpBytes(tenant, member)}`,
    },
    /** A key's recent creates and closes (flapping detection), in the key's own shard. */
    flapKey: (tenant: string, key: string) => `${tag(tenant, key)}:fl:${lpBytes(tenant, key)}`,
    /** A key's history (GET /v1/incidents/{key}/history), in the key's own shard. */
    historyKey: (tenant: string, key: string) => `${tag(tenant, key)}:hi:${lpBytes(tenant, key)}`,
    windowKey: (tenant: string, key: string) => `${tag(tenant, key)}:w:${tenant}:${key}`,
    /** The outbox stream of the shard that holds this tenant's key. */
    outboxKeyFor: (tenant: string, key: string) => `${tag(tenant, key)}:o`,
  };
}

export type KeyLayout = ReturnType<typeof keyLayout>;

function checkShardCount(shards: number) {
  if (!Number.isInteger(shards) || shards < 1 || shards > MAX_SHARDS) throw new RangeError(`the shard count must be an integer from 1 to ${MAX_SHARDS}`);
}

/**
 * A shard frozen for callers on `fromCount` shards: it holds the count the keys
 * moved to, and every script run by a caller still on `fromCount` answers
 * OOMOVED instead of writing (lua/lib/layout.lua). In the shard's own slot.
 */
export const movedKey = (shard: number, fromCount: number) => `{oo:${shard}}:mv:${fromCount}`;

/** The shard hash tag a key starts with (`{oo:S}`), or "" for a key of no shard. */
export const shardTagOf = (key: string) => /^\{oo:\d+\}/.exec(key)?.[0] ?? '';

/** Beside a key of the new layout: it was adopted from the old one, so the old copy is never adopted again. */
export const adoptedKey = (key: string) => key.replace(/^(\{oo:\d+\}):/, '$1:ad:');

/** While a shard move runs: the count the keys are moving from (beside LAYOUT_KEY, in its slot). */
export const MIGRATING_KEY = '{oo:layout}:from';

/** The shard count the keys in this Redis were written with (one slot: `{oo:layout}`). */
export const LAYOUT_KEY = '{oo:layout}:shards';

/** The epoch marker and its count (store/contract/epoch.ts): one slot, `{oo:epoch}`, of no shard; never expiring. */
export const EPOCH_KEY = '{oo:epoch}:id';
export const EPOCH_SEQ_KEY = '{oo:epoch}:seq';

/** The least layout generation a replica needs to read these keys (store/contract/generation.ts), beside LAYOUT_KEY. */
export const READER_KEY = '{oo:layout}:reader';

/** The silence keys (one slot: `{oo:sil}`). */
export const silenceKeys = {
  silence: (tenant: string, id: string) => `{oo:sil}:s:${lpBytes(tenant, id)}`,
  tenant: (tenant: string) => `{oo:sil}:t:${lpBytes(tenant)}`,
  all: '{oo:sil}:all',
  version: '{oo:sil}:v',
  /** each kept silence by the version its last write made (zset key → version) */
  changes: '{oo:sil}:c',
};

/** A tenant's heartbeats (one slot: `{oo:hb}`). */
export const heartbeatKey = (tenant: string) => `{oo:hb}:${lpBytes(tenant)}`;

/** The inhibitor keys (one slot: `{oo:inh}`). */
export const inhibitorKeys = {
  group: (tenant: string, rule: string, tuple: string) => `{oo:inh}:g:${lpBytes(tenant, rule, tuple)}`,
  source: (tenant: string, source: string) => `{oo:inh}:s:${lpBytes(tenant, source)}`,
};
