import type Database from 'better-sqlite3';
import type { Clock } from '../../core/clock.js';
import { type DedupStore, type EpochMark, newEpoch, SWEEP_BATCH } from '../contract/index.js';
import { SqliteDb, type SqliteOptions } from './sqlite-db.js';
import { SqliteDeliveries } from './sqlite-deliveries.js';
import { SqliteDevices } from './sqlite-devices.js';
import { SqliteIncidents } from './sqlite-incidents.js';
import { SqliteQueries } from './sqlite-queries.js';
import { SqliteRequests } from './sqlite-requests.js';
import { SqliteSilences } from './sqlite-silences.js';
import { SqliteInhibitors } from './sqlite-inhibitors.js';
import { SqliteTickets } from './sqlite-tickets.js';
import { SqliteHeartbeats } from './sqlite-heartbeats.js';
import { SqliteFlaps } from './sqlite-flaps.js';
import { SqliteGroups } from './sqlite-groups.js';
import { SqliteHistory } from './sqlite-history.js';
import { SqliteWindows } from './sqlite-windows.js';

export type { SqliteOptions, SqliteSynchronous } from './sqlite-db.js';

/**
 * The embedded durable store (better-sqlite3, WAL). Several processes may share
 * one file: every decision is a BEGIN IMMEDIATE transaction, so SQLite's write
 * lock serialises them. The facets share one connection and group commit.
 */
export class SqliteStore implements DedupStore {
  readonly kind = 'sqlite';
  protected readonly x: SqliteDb;
  readonly incidents: SqliteIncidents;
  readonly devices: SqliteDevices;
  readonly windows: SqliteWindows;
  readonly deliveries: SqliteDeliveries;
  readonly queries: SqliteQueries;
  readonly requests: SqliteRequests;
  readonly silences: SqliteSilences;
  readonly inhibitors: SqliteInhibitors;
  readonly tickets: SqliteTickets;
  readonly heartbeats: SqliteHeartbeats;
  readonly flaps: SqliteFlaps;
  readonly groups: SqliteGroups;
  readonly history: SqliteHistory;

  constructor(
    readonly path: string,
    clock: Clock,
    options: SqliteOptions = {},
  ) {
    this.x = new SqliteDb(path, clock, options);
    this.deliveries = new SqliteDeliveries(this.x);
    this.incidents = new SqliteIncidents(this.x, this.deliveries, options.expiredGraceMs);
    this.devices = new SqliteDevices(this.x);
    this.windows = new SqliteWindows(this.x, this.deliveries);
    this.queries = new SqliteQueries(this.x);
    this.requests = new SqliteRequests(this.x);
    this.silences = new SqliteSilences(this.x);
    this.inhibitors = new SqliteInhibitors(this.x);
    this.tickets = new SqliteTickets(this.x);
    this.heartbeats = new SqliteHeartbeats(this.x);
    this.flaps = new SqliteFlaps(this.x);
    this.groups = new SqliteGroups(this.x);
    this.history = new SqliteHistory(this.x);
  }

  sweepExpired() {
    return this.x.writes.submit(
      () =>
        this.incidents.sweep(SWEEP_BATCH) +
        this.devices.sweep(SWEEP_BATCH) +
        this.windows.sweep(SWEEP_BATCH) +
        this.deliveries.sweep(SWEEP_BATCH) +
        this.requests.sweep(SWEEP_BATCH) +
        this.silences.sweep(SWEEP_BATCH) +
        this.inhibitors.sweep(SWEEP_BATCH) +
        this.tickets.sweep(SWEEP_BATCH) +
        this.flaps.sweep(SWEEP_BATCH) +
        this.history.sweep(SWEEP_BATCH),
    );
  }

  ping() {
    return this.x.ping();
  }

  tickEpoch(): Promise<EpochMark> {
    return this.x.writes.submit(
      () =>
        this.x.db
          .prepare<[{ epoch: string }], EpochMark>(
            'INSERT INTO epoch (id, epoch, seq) VALUES (1, @epoch, 1) ON CONFLICT (id) DO UPDATE SET seq = seq + 1 RETURNING epoch, seq',
          )
          .get({ epoch: newEpoch() })!,
    );
  }

  /** The better-sqlite3 connection, for inspection (and for tests that make the file unwritable). */
  get database(): Database.Database {
    return this.x.db;
  }

  /** The WAL and its checkpoints (/metrics); null for a database in memory. */
  checkpoints() {
    return this.x.checkpoints();
  }

  close() {
    return this.x.close();
  }
}
