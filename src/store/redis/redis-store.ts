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

export interface RedisStoreOptions {
  expiredGraceMs?: number;
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

  constructor(
    readonly conn: RedisConnection,
    kind: 'redis' | 'redis-cluster' = 'redis',
    options: RedisStoreOptions = {},
  ) {
    this.kind = kind;
    this.incidents = new RedisIncidents(conn, options.expiredGraceMs, kind === 'redis-cluster');
    this.devices = new RedisDevices(conn);
    this.windows = new RedisWindows(conn);
    this.deliveries = new RedisDeliveries(conn);
    this.queries = new RedisQueries(conn, this.incidents);
    this.requests = new RedisRequests(conn);
    this.silences = new RedisSilences(conn);
    this.inhibitors = new RedisInhibitors(conn);
    this.tickets = new RedisTickets(conn);
    this.heartbeats = new RedisHeartbeats(conn);
    this.flaps = new RedisFlaps(conn);
    this.groups = new RedisGroups(conn);
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
