import pg from 'pg';
import { StoreUnavailableError } from '../errors.js';
import { CONNECT_TIMEOUT_MS, ConnectGate, gatedClient } from './connect-gate.js';

/** int8 (bigint) columns as JavaScript numbers: every one here is a millisecond time, a sequence or a count below 2^53. */
const types = {
  getTypeParser: ((oid: number, format?: string) =>
    oid === 20 ? (v: string) => Number(v) : pg.types.getTypeParser(oid, format as 'text')) as typeof pg.types.getTypeParser,
};

export type Queryable = pg.PoolClient | pg.Pool;

/**
 * How long the server lets one of our sessions sit in an open transaction
 * waiting for the client. A replica cut off by the network between BEGIN and
 * COMMIT leaves its session idle in the transaction, holding what it locked
 * (the outbox and delivery rows a fan-out, lease or settle was working on,
 * an Idempotency-Key's row); Postgres sends nothing meanwhile, so TCP never
 * notices, and for hours the other replicas skip those rows (SKIP LOCKED) or
 * wait on them. (A decision is one function call, not a transaction held
 * open across round trips.) Our transactions are a few statements sent back
 * to back: 10 s of silence inside one is a lost client, never a slow one.
 */
export const IDLE_IN_TRANSACTION_MS = 10_000;

export interface PoolOptions {
  /** An idle connection that dies is reported here (the pool replaces it on the next query). */
  onError?: (err: Error) => void;
  /** Shared by pools that reach the same server, so an outage paces them together. */
  gate?: ConnectGate;
}

/** What every connection of ours is opened with: `schema` on its search_path, named `onceonly` in pg_stat_activity. */
export function connectionConfig(url: string, schema: string) {
  return {
    connectionString: url,
    types,
    options: `-c search_path=${schema} -c idle_in_transaction_session_timeout=${IDLE_IN_TRANSACTION_MS}`,
    application_name: 'onceonly',
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    // A store that vanished without a FIN is noticed by the kernel on an idle connection too.
    keepAlive: true,
  };
}

/** A pool of `max` connections, opened through a gate that paces them after a failure (connect-gate.ts). */
export function openPool(url: string, schema: string, max = 10, options: PoolOptions = {}): pg.Pool {
  const pool = new pg.Pool({ ...connectionConfig(url, schema), Client: gatedClient(options.gate ?? new ConnectGate()), max });
  // An idle connection that dies (a Postgres restart, a cut network) is
  // reported here; unhandled, it would take the process down. The pool
  // replaces it on the next query, and fail-open covers the gap.
  pool.on('error', options.onError ?? (() => {}));
  return pool;
}

/**
 * One transaction; with `lock`, first an advisory transaction lock on it, so
 * every operation on one key (or device) runs one at a time across all
 * replicas: the read and the write inside are then one atomic step.
 */
export async function transaction<T>(pool: pg.Pool, lock: string | null, body: (c: pg.PoolClient) => Promise<T>): Promise<T> {
  const c = await pool.connect().catch((err: Error) => {
    throw new StoreUnavailableError(`Postgres is unreachable: ${err.message}`);
  });
  // A checked-out connection that dies emits 'error' on itself (the pool only
  // listens on idle ones); the failed query rejects too, which is what we act on.
  const ignore = () => {};
  c.on('error', ignore);
  let broken = false;
  try {
    await c.query('BEGIN');
    if (lock !== null) await c.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [lock]);
    const result = await body(c);
    await c.query('COMMIT');
    return result;
  } catch (err) {
    await c.query('ROLLBACK').catch(() => {
      broken = true;
    });
    throw err;
  } finally {
    c.off('error', ignore);
    // A connection whose ROLLBACK failed is not given back to the pool.
    c.release(broken);
  }
}
