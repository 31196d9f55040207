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

export interface RedisStoreOptions {
  expiredGraceMs?: number;
  /** How many hash-tag shards the keys are spread over (`redis.shards`; part of the stored layout). */
  shards?: number;
}

/**
 * Shared store for active-active replicas. Every operation is ONE Lua script,
 * one round trip, on the server's clock; TTLs are Redis's own PX expiries, so
 * nothing needs sweeping. The facets share one connection.
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

  constructor(
    readonly conn: RedisConnection,
    kind: 'redis' | 'redis-cluster' = 'redis',
    options: RedisStoreOptions = {},
  ) {
    this.kind = kind;
    const k = (this.layout = keyLayout(options.shards));
    this.incidents = new RedisIncidents(conn, k, options.expiredGraceMs, kind === 'redis-cluster');
    this.devices = new RedisDevices(conn, k);
    this.windows = new RedisWindows(conn, k);
    this.deliveries = new RedisDeliveries(conn, k);
    this.queries = new RedisQueries(conn, this.incidents, k);
    this.requests = new RedisRequests(conn, k);
    this.silences = new RedisSilences(conn);
    this.inhibitors = new RedisInhibitors(conn);
    this.tickets = new RedisTickets(conn, k);
    this.heartbeats = new RedisHeartbeats(conn);
    this.flaps = new RedisFlaps(conn, k);
    this.groups = new RedisGroups(conn, k);
  }

  /**
   * Records the shard count in Redis, or checks it against the one recorded:
   * two replicas on different counts would look for one key in two places and
   * both answer CREATE, so a replica configured differently refuses to start.
   * A Redis that does not answer now is not waited for (the replica starts and
   * fails open, as it does whenever Redis is away); the next start checks.
   */
  async init() {
    const shards = this.layout.shards;
    let held: unknown;
    try {
      held = await withTimeout(this.conn.send(LAYOUT_KEY, ['SET', LAYOUT_KEY, String(shards), 'NX', 'GET']), 2000);
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

  /** Redis expires keys itself: every record, marker and counter carries its lifetime as a PX expiry. */
  async sweepExpired() {
    return 0;
  }

  ping() {
    return this.conn.ping();
  }

  close() {
    return this.conn.close();
  }
}
