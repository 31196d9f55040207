import type { Clock } from '../core/clock.js';
import type { DedupStore, Ledger, SharedStore } from './contract/index.js';
import { FailOpenStore, type FailOpenEvents } from './failopen/fail-open-store.js';
import { Journal } from './failopen/journal.js';
import { openDefaultJournal } from './failopen/journal-path.js';
import { MemoryStore } from './memory/memory-store.js';
import { redisConnection } from './redis/connection.js';
import { RedisStore } from './redis/redis-store.js';
import { SqliteStore, type SqliteSynchronous } from './sqlite/sqlite-store.js';
import { PgStore } from './postgres/pg-store.js';
import { openPool } from './postgres/pool.js';
import { ConnectGate } from './postgres/connect-gate.js';
import { ProbeConnection } from './postgres/probe-connection.js';
import { SCHEMA_NAME } from './postgres/migrate.js';

export class StoreUrlError extends Error {
  readonly code = 'store_url';
  override name = 'StoreUrlError';
}

/** A store URL as logs and messages show it: a password, wherever it is, becomes ***. */
export const masked = (url: string) => url.replace(/(\/\/[^/@:]*:)[^/@]*@/g, '$1***@');
/** The same, quoted, for a message. */
export const shown = (url: string) => JSON.stringify(masked(url));

export const DEFAULT_STORE_URL = 'sqlite:./data/onceonly.db';

export interface StoreOptions {
  /** How long an expired, unclosed record is kept to detect premature expiry. */
  expiredGraceMs?: number;
  /** Fail-open settings for shared (remote) stores. */
  failOpen?: {
    timeoutMs?: number;
    failAfter?: number;
    recoverAfter?: number;
    operationTimeoutMs?: number;
    probeIntervalMs?: number;
    /** The journal's file; unset, one per `port` (failopen/journal-path.ts). */
    journalPath?: string;
    /** The port this replica listens on: names its default journal. */
    port?: number;
    events?: FailOpenEvents;
  };
  /** Connection errors of remote stores (they reconnect on their own). */
  onConnectionError?: (err: Error) => void;
  /** SQLite: its checkpoint worker stopped, or its passes began to fail (the gauge shows when they pass again). */
  onCheckpointProblem?: (err: Error) => void;
  /** Ledger mode's audit trail (kept by Postgres). */
  ledger?: Ledger;
  /** Redis: the hash-tag shard count (default 64; part of the stored layout, docs/scaling.md). */
  redisShards?: number;
  /** Redis: check at init that it keeps what it acknowledges, refusing one that does not unless `acceptDataLoss`. */
  redisPersistence?: { acceptDataLoss: boolean; onUnchecked?: (why: string) => void };
  /** Redis: the replica moved to another shard count, meeting a shard `migrate-shards` froze. */
  onShardsMoved?: (from: number, to: number) => void;
}

/** Shared stores are wrapped in fail-open, with a local journal (ADR 8). */
function failOpen(inner: SharedStore, clock: Clock, options: StoreOptions): DedupStore {
  const fo = options.failOpen ?? {};
  // Chosen from `npm run bench -- failopen` (docs/operations.md): the slowest store-time answer seen here,
  // loaded, was about 24 ms on Redis and 100 ms on Postgres (a function call that waits on its key's lock
  // and a commit to disk); three failures in a row are needed before failing open.
  const timeoutMs = fo.timeoutMs ?? (inner.kind === 'postgres' ? 300 : 50);
  const journal = fo.journalPath ? new Journal(fo.journalPath, clock, { own: true }) : openDefaultJournal(fo.port ?? 0, clock);
  return new FailOpenStore(inner, journal, clock, { ...fo, timeoutMs });
}

/** Whether a store URL names Postgres (`postgres://` or `postgresql://`). */
export const isPostgresUrl = (url: string): boolean => /^(postgres|postgresql):\/\//.test(url);

/** `postgres://…[?schema=NAME]`: the schema (default `onceonly`) is ours to create and migrate; the rest goes to pg. */
export function postgresUrl(url: string): { connection: string; schema: string } {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new StoreUrlError(`store URL ${shown(url)} is not a valid postgres:// URL`);
  }
  if (u.hostname === '' || u.pathname.length < 2) {
    throw new StoreUrlError(`store URL ${shown(url)} is not a valid postgres:// URL: give a host and a database, e.g. postgres://user@127.0.0.1:5432/onceonly`);
  }
  const schema = u.searchParams.get('schema') ?? 'onceonly';
  if (!SCHEMA_NAME.test(schema)) throw new StoreUrlError(`store URL option schema=${JSON.stringify(schema)} must be lower-case letters, digits and _`);
  u.searchParams.delete('schema');
  return { connection: u.toString(), schema };
}

/** A `sqlite:` URL's file path and query (`sqlite:///abs` is `/abs`). */
const sqliteParts = (url: string) =>
  url
    .slice('sqlite:'.length)
    .replace(/^\/\/(?=\/)/, '')
    .split('?', 2);

/** The file a `sqlite:` store URL names, or null for any other store (or a SQLite URL without a path). */
export const sqliteFileOf = (url: string): string | null => (url.startsWith('sqlite:') ? sqliteParts(url)[0] || null : null);

/**
 * Opens a store from its URL:
 *   memory:
 *   sqlite:PATH[?synchronous=normal|full]
 *   redis://[user:pass@]host:port[/db]   rediss://…   redis+cluster://h1:p1,h2:p2
 *   postgres://[user[:pass]@]host[:port]/db[?schema=onceonly]
 * Remote stores are wrapped in fail-open with a local journal.
 */
export function openStore(url: string, clock: Clock, options: StoreOptions = {}): DedupStore {
  const grace = options.expiredGraceMs;
  if (url === 'memory:' || url === 'memory://') return new MemoryStore(clock, grace);
  if (url.startsWith('sqlite:')) {
    const [rawPath = '', query = ''] = sqliteParts(url);
    if (rawPath === '') throw new StoreUrlError(`store URL ${shown(url)} has no file path: use sqlite:./data/onceonly.db`);
    const params = new URLSearchParams(query);
    for (const name of params.keys()) {
      if (name !== 'synchronous') throw new StoreUrlError(`store URL option ${JSON.stringify(name)} is unknown (known: synchronous)`);
    }
    const sync = params.get('synchronous') ?? 'normal';
    if (sync !== 'normal' && sync !== 'full') {
      throw new StoreUrlError(`store URL option synchronous=${JSON.stringify(sync)} must be normal or full`);
    }
    return new SqliteStore(rawPath, clock, { synchronous: sync as SqliteSynchronous, expiredGraceMs: grace, onCheckpointProblem: options.onCheckpointProblem });
  }
  if (/^(redis|rediss|redis\+cluster):\/\/./.test(url)) {
    const cluster = url.startsWith('redis+cluster:');
    if (!cluster) {
      try {
        new URL(url);
      } catch {
        throw new StoreUrlError(`store URL ${shown(url)} is not a valid redis:// URL`);
      }
    }
    const conn = redisConnection(url, { onError: options.onConnectionError });
    return failOpen(
      new RedisStore(conn, cluster ? 'redis-cluster' : 'redis', {
        expiredGraceMs: grace,
        ...(options.redisShards !== undefined ? { shards: options.redisShards } : {}),
        ...(options.redisPersistence ? { checkPersistence: true, ...options.redisPersistence } : {}),
        ...(options.onShardsMoved ? { onMoved: options.onShardsMoved } : {}),
      }),
      clock,
      options,
    );
  }
  if (isPostgresUrl(url)) {
    const { connection, schema } = postgresUrl(url);
    const gate = new ConnectGate();
    const onError = options.onConnectionError;
    return failOpen(
      new PgStore(openPool(connection, schema, 10, { gate, ...(onError ? { onError } : {}) }), clock, {
        expiredGraceMs: grace,
        schema,
        probe: new ProbeConnection(connection, schema, gate),
        ...(options.ledger ? { ledger: options.ledger } : {}),
      }),
      clock,
      options,
    );
  }
  throw new StoreUrlError(
    `store URL ${shown(url)} is not recognised: use memory:, sqlite:PATH, redis://host:port, redis+cluster://h1:p1,h2:p2 or postgres://host/db`,
  );
}
