import type { SharedStore } from '../contract/index.js';
import type { RedisConnection } from './connection.js';
import { RedisDeliveries } from './redis-deliveries.js';
import { RedisDevices } from './redis-devices.js';
import { RedisIncidents } from './redis-incidents.js';
import { RedisQueries } from './redis-queries.js';
import { RedisWindows } from './redis-windows.js';
import { RedisRequests } from './redis-requests.js';
import { RedisSilences } from './redis-silences.js';
import { RedisInhibitors } from './redis-inhibitors.js';
import { RedisTickets } from './redis-tickets.js';
import { RedisHeartbeats } from './redis-heartbeats.js';
import { RedisFlaps } from './redis-flaps.js';
import { RedisGroups } from './redis-groups.js';
import { keyLayout, LAYOUT_KEY, type KeyLayout } from './keys.js';
import { isTransportFault, withTimeout } from '../errors.js';
import { followMoves } from './follow-moves.js';
import { ShardMigration } from './shard-migration.js';

export interface RedisStoreOptions {
  expiredGraceMs?: number;
  /** How many hash-tag shards the keys are spread over (`redis.shards`; part of the stored layout). */
  shards?: number;
  /** The store moved to another shard count (a migration froze a shard it called). */
  onMoved?: (from: number, to: number) => void;
}

/**
 * Shared store for active-active replicas. Every operation is ONE Lua script,
 * one round trip, on the server's clock; TTLs are Redis's own PX expiries, so
 * nothing needs sweeping. The facets share one connection; health probes
 * have one of their own (connection.ts).
 */
export class RedisStore implements SharedStore {
  readonly kind: string;
  readonly incidents: RedisIncidents;
  readonly devices: RedisDevices;
  readonly windows: RedisWindows;
  readonly deliveries: RedisDeliveries;
  readonly queries: RedisQueries;
  readonly requests: RedisRequests;
  readonly silences: RedisSilences;
  readonly inhibitors: RedisInhibitors;
  readonly tickets: RedisTickets;
  readonly heartbeats: RedisHeartbeats;
  readonly flaps: RedisFlaps;
  readonly groups: RedisGroups;
  readonly layout: KeyLayout;
  readonly migration: ShardMigration;

  constructor(
    readonly conn: RedisConnection,
    kind: 'redis' | 'redis-cluster' = 'redis',
    options: RedisStoreOptions = {},
  ) {
    this.kind = kind;
    const k = (this.layout = keyLayout(options.shards));
    // Every script is told the caller's shard count (lib/layout.lua), so a shard frozen by a migration refuses it.
    const guarded: RedisConnection = {
      evalScript: (script, keys, args) => conn.evalScript(script, keys, [...args, k.shards]),
      ping: () => conn.ping(),
      scan: (match, max) => conn.scan(match, max),
      close: () => conn.close(),
      send: (key, args) => conn.send(key, args),
    };
    const m = (this.migration = new ShardMigration(guarded, k));
    const moving = <T extends object>(facet: T) =>
      followMoves(facet, (to) => {
        const from = k.shards;
        m.movedTo(to);
        if (from !== to) options.onMoved?.(from, to);
      });
    this.incidents = moving(new RedisIncidents(guarded, k, m, options.expiredGraceMs, kind === 'redis-cluster'));
    const devices = new RedisDevices(guarded, k, m);
    this.devices = moving(devices);
    this.windows = moving(new RedisWindows(guarded, k, m));
    this.deliveries = moving(new RedisDeliveries(guarded, k, m));
    this.queries = moving(new RedisQueries(guarded, this.incidents, k, devices));
    this.requests = moving(new RedisRequests(guarded, k, m));
    this.silences = new RedisSilences(guarded);
    this.inhibitors = new RedisInhibitors(guarded);
    this.tickets = moving(new RedisTickets(guarded, k, m));
    this.heartbeats = new RedisHeartbeats(guarded);
    this.flaps = moving(new RedisFlaps(guarded, k, m));
    this.groups = moving(new RedisGroups(guarded, k, m));
  }

  /**
   * Records the shard count in Redis, or checks it against the one recorded:
   * two replicas on different counts would look for one key in two places and
   * both answer CREATE, so a replica configured differently refuses to start.
   * While a migration runs (`onceonly migrate-shards`) the record is the new
   * count, and the replica learns the old one to adopt keys from.
   * A Redis that does not answer now is not waited for (the replica starts and
   * fails open, as it does whenever Redis is away); the next start checks.
   */
  async init() {
    const shards = this.layout.shards;
    let held: unknown;
    try {
      held = await withTimeout(this.conn.send(LAYOUT_KEY, ['SET', LAYOUT_KEY, String(shards), 'NX', 'GET']), 2000);
      if (held === null || held === undefined || Number(held) === shards) await withTimeout(this.migration.begin(), 2000);
    } catch (err) {
      if (isTransportFault(err)) return;
      throw err;
    }
    if (held !== null && held !== undefined && Number(held) !== shards) {
      throw new Error(
        `Redis holds keys laid out in ${String(held)} shards and this replica is configured with redis.shards: ${shards}; every replica must use the count the keys were written with (changing it moves them: see docs/scaling.md)`,
      );
    }
  }

  /**
   * Redis expires keys itself: every record, marker and counter carries its
   * lifetime as a PX expiry. What the sweep does is trim the per-tenant
   * listing indexes of the keys that expired (lua/lib/listing.lua); the count it answers is those.
   */
  async sweepExpired() {
    return this.queries.trimListings();
  }

  ping() {
    return this.conn.ping();
  }

  probeHealth() {
    return this.conn.probe ? this.conn.probe() : this.conn.ping();
  }

  close() {
    return this.conn.close();
  }
}
