import type { TicketOwner } from '../contract/index.js';
import { type KeyLayout, lpBytes, shardTagOf } from './keys.js';

/** How a key is carried from the old layout: `d` copied once, `n` a delivery counter taken past its old value. */
export type AdoptMode = 'd' | 'n';

/**
 * The keys that belong to one record, all in that record's shard, computed
 * for a layout: the first is the one whose marker says the set was adopted.
 * A record with a member in its shard's index (an incident's in the live
 * index, a device's in the freshness index) names it, so the adopted record
 * is indexed in its new shard.
 */
export interface AdoptSet {
  keys: (l: KeyLayout) => Array<readonly [string, AdoptMode]>;
  index?: { kind: 'lv' | 'f'; member: string };
  /** The tenant's own listing indexes that name the record in its shard (`{oo:S}:<kind>:<tenant>`), written by adopt-write.lua in the new one. */
  listed?: { kinds: ReadonlyArray<'ti' | 'tf'>; tenant: string; member: string };
}

/** A key's delivery counters (the n of an Idempotency-Key), in the shard of the outbox its entries go to. */
const counters = (outboxKey: string, kind: string, tenant: string, key: string, actions: readonly string[]) =>
  actions.map((a) => [`${shardTagOf(outboxKey)}:n:${lpBytes(kind, tenant, key, a)}`, 'n'] as const);

const ALL_ACTIONS = ['create', 'update', 'close'] as const;

/**
 * Everything of one kind of record that moves with the shard count. Not
 * carried: delivery state (it is drained where it is, every old shard being
 * a shard of the new count too), journal-replay markers, and the per-shard
 * indexes (rebuilt from the records adopted).
 */
export const adoptSets = {
  incident: (l0: KeyLayout, tenant: string, key: string): AdoptSet => ({
    keys: (l) => [
      [l.incidentRecordKey(tenant, key), 'd'],
      [l.incidentShownKey(tenant, key), 'd'],
      [l.ackMarkerKey(tenant, key), 'd'],
      [l.escalationKey(tenant, key), 'd'],
      [l.resolutionKey(tenant, key), 'd'],
      [l.closedKey(tenant, key), 'd'],
      ...counters(l.outboxKeyFor(tenant, key), 'incident', tenant, key, ALL_ACTIONS),
    ],
    // A getter: the member is a hash, needed only while the count changes (most calls never read it).
    get index() {
      return { kind: 'lv' as const, member: l0.liveIndex(tenant, key).member };
    },
    listed: { kinds: ['ti'], tenant, member: key },
  }),
  window: (tenant: string, key: string): AdoptSet => ({
    keys: (l) => [[l.windowKey(tenant, key), 'd'], ...counters(l.outboxKeyFor(tenant, key), 'violation', tenant, key, ['create'])],
  }),
  device: (l0: KeyLayout, tenant: string, device: string): AdoptSet => ({
    keys: (l) => {
      const k = l.deviceKeys(tenant, device, '', 0);
      return [[k.device, 'd'], [k.boots, 'd'], ...counters(k.outbox, 'event', tenant, device, ['notify'])];
    },
    get index() {
      return { kind: 'f' as const, member: l0.deviceKeys(tenant, device, '', 0).member };
    },
    listed: { kinds: ['tf'], tenant, member: device },
  }),
  /** An event's seen-marker is its own set: a repeat of an event the old layout applied stays a duplicate. */
  seen: (tenant: string, device: string, boot: string, sequence: number): AdoptSet => ({
    keys: (l) => [[l.deviceKeys(tenant, device, boot, sequence).seen, 'd']],
  }),
  ticket: (o: TicketOwner): AdoptSet => ({ keys: (l) => [[l.ticketKey(o.adapter, o.tenant, o.kind, o.key), 'd']] }),
  group: (tenant: string, groupKey: string): AdoptSet => ({
    keys: (l) => [[l.groupKeys.group(tenant, groupKey), 'd'], ...counters(l.outboxKeyFor(tenant, groupKey), 'group', tenant, groupKey, ALL_ACTIONS)],
  }),
  member: (tenant: string, member: string): AdoptSet => ({ keys: (l) => [[l.groupKeys.member(tenant, member), 'd']] }),
  flap: (tenant: string, key: string): AdoptSet => ({ keys: (l) => [[l.flapKey(tenant, key), 'd']] }),
  history: (tenant: string, key: string): AdoptSet => ({ keys: (l) => [[l.historyKey(tenant, key), 'd']] }),
  request: (tenant: string, key: string): AdoptSet => ({ keys: (l) => [[l.requestKey(tenant, key), 'd']] }),
};
