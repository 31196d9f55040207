import type pg from 'pg';
import { type Clock, ServerClock } from '../../core/clock.js';
import { type EpochMark, GENERATION, MIN_READER, newEpoch, newerLayoutProblem, type Ledger, type SharedStore } from '../contract/index.js';
import { PgDb } from './pg-db.js';
import { PgDeliveries } from './pg-deliveries.js';
import { PgDevices } from './pg-devices.js';
import { PgIncidents } from './pg-incidents.js';
import { PgQueries } from './pg-queries.js';
import { PgRequests } from './pg-requests.js';
import { PgSilences } from './pg-silences.js';
import { PgInhibitors } from './pg-inhibitors.js';
import { PgTickets } from './pg-tickets.js';
import { PgHeartbeats } from './pg-heartbeats.js';
import { PgFlaps } from './pg-flaps.js';
import { PgHistory } from './pg-history.js';
import { PgGroups } from './pg-groups.js';
import { PgWindows } from './pg-windows.js';
import { migrate } from './migrate.js';
import type { ProbeConnection } from './probe-connection.js';

export interface PgStoreOptions {
  expiredGraceMs?: number;
  /** The schema migrations go to; without one, the pool's search_path is taken as migrated. */
  schema?: string;
  ledger?: Ledger;
  /** The connection health probes use, apart from the pool (probe-connection.ts); without it, probes use the pool. */
  probe?: ProbeConnection;
}

/**
 * Postgres (pg, a pool). Every operation is one transaction; those that read
 * then write first take an advisory transaction lock on their key (ADR 11),
 * and the deciding ones are server-side functions, one round trip each (ADR 13).
 * Times come from the injected clock, as in the SQLite store; a server
 * builds that clock as a ServerClock, which init() sets to follow the Postgres
 * server's own time, so replicas whose hosts disagree still share one clock.
 */
export class PgStore implements SharedStore {
  readonly kind = 'postgres';
  readonly incidents: PgIncidents;
  readonly devices: PgDevices;
  readonly windows: PgWindows;
  readonly deliveries: PgDeliveries;
  readonly queries: PgQueries;
  readonly requests: PgRequests;
  readonly silences: PgSilences;
  readonly inhibitors: PgInhibitors;
  readonly tickets: PgTickets;
  readonly heartbeats: PgHeartbeats;
  readonly flaps: PgFlaps;
  readonly groups: PgGroups;
  readonly history: PgHistory;
  private readonly schema: string | null;
  private readonly probe: ProbeConnection | null;

  constructor(
    private readonly pool: pg.Pool,
    private readonly clock: Clock,
    options: PgStoreOptions = {},
  ) {
    const x = new PgDb(pool, clock, options.ledger ?? null);
    this.schema = options.schema ?? null;
    this.probe = options.probe ?? null;
    this.deliveries = new PgDeliveries(pool, clock);
    this.incidents = new PgIncidents(x, options.expiredGraceMs);
    this.devices = new PgDevices(x);
    this.windows = new PgWindows(x);
    this.queries = new PgQueries(x);
    this.requests = new PgRequests(x);
    this.silences = new PgSilences(x);
    this.inhibitors = new PgInhibitors(x);
    this.tickets = new PgTickets(x);
    this.heartbeats = new PgHeartbeats(x);
    this.flaps = new PgFlaps(x);
    this.groups = new PgGroups(x);
    this.history = new PgHistory(x);
  }

  /** Applies the migrations not yet applied (when the store was opened with its schema name). */
  async init(): Promise<void> {
    if (this.schema) {
      await migrate(this.pool, this.schema);
      // Whether this build can read what the schema holds, and the generation its own writes need, in one statement.
      const { rows } = await this.pool.query<{ held: number }>(
        `WITH old AS (SELECT min_reader FROM reader_generation WHERE id = 1),
         raised AS (
           INSERT INTO reader_generation (id, min_reader) VALUES (1, $1)
           ON CONFLICT (id) DO UPDATE SET min_reader = GREATEST(reader_generation.min_reader, EXCLUDED.min_reader)
           WHERE reader_generation.min_reader <= $2
         )
         SELECT coalesce((SELECT min_reader FROM old), 0) AS held`,
        [MIN_READER, GENERATION],
      );
      const problem = newerLayoutProblem(Number(rows[0]!.held), `Postgres schema ${this.schema}`);
      if (problem) throw new Error(problem);
    }
    // The probe's connection is opened now, not by the first probe: that one
    // comes when the store already looks slow, and must not pay a connect too.
    await this.probe?.check();
    // Decisions, leases and sweeps on the server's clock, not this host's: measured before the first one.
    if (this.clock instanceof ServerClock) await this.clock.follow(() => this.serverNow());
  }

  /** The Postgres server's own time, in ms. */
  async serverNow(): Promise<number> {
    const { rows } = await this.pool.query<{ ms: string }>(`SELECT (extract(epoch from clock_timestamp()) * 1000)::float8 AS ms`);
    return Number(rows[0]!.ms);
  }

  /** Small batches, each its own statement: no long lock. */
  async sweepExpired() {
    return (
      (await this.incidents.sweep()) +
      (await this.devices.sweep()) +
      (await this.windows.sweep()) +
      (await this.deliveries.sweep()) +
      (await this.requests.sweep()) +
      (await this.silences.sweep()) +
      (await this.inhibitors.sweep()) +
      (await this.tickets.sweep()) +
      (await this.flaps.sweep()) +
      (await this.history.sweep())
    );
  }

  async ping() {
    await this.pool.query('SELECT 1');
  }

  async tickEpoch(): Promise<EpochMark> {
    const { rows } = await this.pool.query<{ epoch: string; seq: string }>(
      'INSERT INTO epoch (id, epoch, seq) VALUES (1, $1, 1) ON CONFLICT (id) DO UPDATE SET seq = epoch.seq + 1 RETURNING epoch, seq',
      [newEpoch()],
    );
    return { epoch: rows[0]!.epoch, seq: Number(rows[0]!.seq) };
  }

  async probeHealth() {
    if (this.probe) await this.probe.check();
    else await this.ping();
  }

  async close() {
    if (this.clock instanceof ServerClock) this.clock.stop();
    await Promise.all([this.pool.end(), this.probe?.close()]);
  }
}
