import { ErrorReply } from '@redis/client';

/** The errors a store raises beyond its data's own, and how a shared store's failures are told apart. */

/** The store cannot serve now (unreachable, or refusing while degraded): the caller answers 503 and the producer retries. */
export class StoreUnavailableError extends Error {
  override name = 'StoreUnavailableError';
}

export class StoreTimeoutError extends Error {
  override name = 'StoreTimeoutError';
}

/**
 * The shared store answered, and refused this request: it is full (Redis
 * `OOM`, `MISCONF`; Postgres out of disk or memory), a value passed one of its
 * limits (Postgres class 54), or any reply not known to mean "unreachable".
 * The request fails alone with this message; the replica does not fail open.
 */
export class StoreRefusedError extends Error {
  override name = 'StoreRefusedError';
  constructor(
    message: string,
    /** full: the store takes no writes from anyone until space is freed (a 503, retried later) */
    readonly full: boolean,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** A race of `p` against a plain timer. Fail-open judges the store with storeDeadline (loop-stalls.ts) instead. */
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
 * Redis replies that say the server cannot serve anyone right now, and will
 * again by itself: loading its data, a replica or a failover, a cluster
 * without its slots, a script running past its limit, no room for a client.
 */
const REDIS_UNREACHABLE = /^(LOADING|READONLY|CLUSTERDOWN|MASTERDOWN|TRYAGAIN|BUSY|NOREPLICAS|ERR max number of clients)\b/;
/** Redis replies that say it is full: it takes no more writes until memory (or the disk it saves to) is freed. */
const REDIS_FULL = /^(OOM|MISCONF)\b/;
/** SQLSTATEs of a lost or refused connection: class 08, the server shutting down or starting (57P01-57P04), too many connections. */
const PG_UNREACHABLE = /^(08...|57P0[1-4]|53300)$/;
/** Out of disk or memory: 53100, 53200. (53300, too many connections, is the store's door, not its room.) */
const PG_FULL = /^53[12]00$/;
/** Node's own errors of a socket that could not connect or was cut. */
const SOCKET_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENETDOWN',
  'ENOTCONN',
  'EAI_AGAIN',
  'ERR_SOCKET_CLOSED',
  'EPROTO',
]);
/**
 * A TLS handshake that failed (a certificate this replica does not trust, an
 * expired one, one for another host): the store cannot be reached safely,
 * which is the same as not at all. Never a reason to talk to it in the clear.
 */
const TLS_CODES = /^(ERR_TLS_|ERR_SSL_|DEPTH_ZERO_SELF_SIGNED_CERT$|SELF_SIGNED_CERT_IN_CHAIN$|UNABLE_TO_|CERT_|HOSTNAME_MISMATCH$)/;
/** The Redis client's errors of a connection it does not have (offline, closed, timed out, no node to ask). */
const REDIS_CLIENT = new Set([
  'ConnectionTimeoutError',
  'SocketTimeoutError',
  'ClientClosedError',
  'ClientOfflineError',
  'DisconnectsClientError',
  'SocketClosedUnexpectedlyError',
  'RootNodesUnavailableError',
  'ReconnectStrategyError',
]);
/** The Postgres client's messages for a connection that ended or never came (they carry no SQLSTATE). */
const PG_CLIENT = /^(Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Connection ended unexpectedly)/;

const sqlstateOf = (e: { code?: unknown; severity?: unknown }) =>
  typeof e.code === 'string' && typeof e.severity === 'string' && /^[0-9A-Z]{5}$/.test(e.code) ? e.code : null;

export type StoreFault = 'transport' | 'full' | 'refused';

/**
 * What a failed shared-store call says about the store, by an allow-list:
 * only what is known to mean "unreachable, or not serving anyone now" is
 * `transport` (and may fail the replica open); `full` and everything else,
 * recognised or not, is the request's own failure. An error nobody listed
 * therefore fails one request with a clear error, never the replica open.
 */
export function storeFaultOf(err: unknown): StoreFault {
  if (err instanceof StoreUnavailableError || err instanceof StoreTimeoutError) return 'transport';
  if (err instanceof StoreRefusedError) return err.full ? 'full' : 'refused';
  if (!(err instanceof Error)) return 'refused';
  const e = err as Error & { code?: unknown; severity?: unknown };
  const state = sqlstateOf(e);
  if (state !== null) return PG_UNREACHABLE.test(state) ? 'transport' : PG_FULL.test(state) ? 'full' : 'refused';
  if (err instanceof ErrorReply) return REDIS_UNREACHABLE.test(e.message) ? 'transport' : REDIS_FULL.test(e.message) ? 'full' : 'refused';
  if (REDIS_CLIENT.has(e.constructor.name) || REDIS_CLIENT.has(e.name)) return 'transport';
  if (typeof e.code === 'string' && (SOCKET_CODES.has(e.code) || TLS_CODES.test(e.code))) return 'transport';
  if (PG_CLIENT.test(e.message)) return 'transport';
  return 'refused';
}

/** Whether a failed store call may be answered from the local journal (see storeFaultOf). */
export function isTransportFault(err: unknown): boolean {
  return storeFaultOf(err) === 'transport';
}

/** Whether the error is a reply of a store server (so its first line may be shown to the caller). */
function isStoreReply(err: unknown): err is Error {
  return err instanceof ErrorReply || (err instanceof Error && sqlstateOf(err as { code?: unknown; severity?: unknown }) !== null);
}

/**
 * A shared store's refusal as the request's error: a store reply gets its
 * first line (and SQLSTATE) in the message, so the caller can tell a full
 * store from a value too large; our own errors pass through unchanged.
 */
export function refusalOf(err: unknown): unknown {
  if (!isStoreReply(err)) return err;
  const fault = storeFaultOf(err);
  const state = sqlstateOf(err as { code?: unknown; severity?: unknown });
  const line = `${state ? `SQLSTATE ${state}: ` : ''}${err.message.split('\n')[0]!.slice(0, 300)}`;
  return fault === 'full'
    ? new StoreRefusedError(`the store is full and takes no writes until space is freed (${line}); nothing of this request was stored, retry later`, true, {
        cause: err,
      })
    : new StoreRefusedError(`the store refused this request (${line}); nothing of it was stored`, false, { cause: err });
}
