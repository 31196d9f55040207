import { ErrorReply } from '@redis/client';

/** The errors a store raises beyond its data's own, and the timeout race fail-open is built on. */

/** The store cannot serve now (unreachable, or refusing while degraded): the caller answers 503 and the producer retries. */
export class StoreUnavailableError extends Error {
  override name = 'StoreUnavailableError';
}

export class StoreTimeoutError extends Error {
  override name = 'StoreTimeoutError';
}

export function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout;
  return Promise.race([
    p,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new StoreTimeoutError(`store did not answer within ${ms} ms`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

/**
 * Redis replies that blame the request: a generic error (a script failing on
 * this data, a bad argument) or a wrong type. Every other reply (LOADING,
 * BUSY, OOM, MISCONF, READONLY, CLUSTERDOWN, NOAUTH, …) says the server
 * cannot serve anyone now. A full client table is an ERR that is not ours.
 */
const REDIS_DATA_ERROR = /^(ERR|WRONGTYPE)\b(?! max number of clients)/;
/** SQLSTATE classes that mean the request itself is wrong: data exception, integrity, syntax or access rule, bad input to a function. */
const PG_DATA_ERROR = /^(22|23|42|2F|P0)/;

/**
 * Whether a failed store call may be answered from the local journal (the
 * store is unreachable, slow, or refusing everyone for now) or is this
 * request's own fault (its data cannot be stored as it is), which fails that
 * request alone and must not degrade the replica for everyone. What is not
 * recognised as a data error counts as a transport fault: failing open on an
 * unknown error costs a possible duplicate, refusing it could lose an alert.
 */
export function isTransportFault(err: unknown): boolean {
  if (err instanceof StoreUnavailableError || err instanceof StoreTimeoutError) return true;
  // Our own code rejecting the data: JSON that cannot be written, a value out of range.
  if (err instanceof TypeError || err instanceof RangeError || err instanceof SyntaxError) return false;
  const e = err as { message?: string; code?: unknown; severity?: unknown };
  // pg's DatabaseError carries a SQLSTATE and a severity.
  if (typeof e.code === 'string' && typeof e.severity === 'string' && /^[0-9A-Z]{5}$/.test(e.code)) return !PG_DATA_ERROR.test(e.code);
  // A Redis error reply: a script error on this data, unless the server says it cannot serve now.
  if (err instanceof ErrorReply) return !REDIS_DATA_ERROR.test(e.message ?? '');
  return true;
}
