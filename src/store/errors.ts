import { pgFaultOf, sqlstateOf } from './postgres/errors.js';
import { isRedisReply, redisFaultOf } from './redis/errors.js';
import type { StoreFault } from './fault.js';

export type { StoreFault } from './fault.js';

/** The errors a store raises beyond its data's own, and how a shared store's failures are told apart. */

/** The store cannot serve now (unreachable, or refusing while degraded): the caller answers 503 and the producer retries. */
export class StoreUnavailableError extends Error {
  readonly code = 'store_unavailable';
  override name = 'StoreUnavailableError';
}

export class StoreTimeoutError extends Error {
  readonly code = 'store_timeout';
  override name = 'StoreTimeoutError';
}

/**
 * The shared store answered, and refused this request: it is full (Redis
 * `OOM`, `MISCONF`; Postgres out of disk or memory), a value passed one of its
 * limits (Postgres class 54), or any reply not known to mean "unreachable".
 * The request fails alone with this message; the replica does not fail open.
 */
export class StoreRefusedError extends Error {
  readonly code = 'store_refused';
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
  // Each driver's own errors are read by its backend (redis/errors.ts, postgres/errors.ts).
  const driver = pgFaultOf(err) ?? redisFaultOf(err);
  if (driver) return driver;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string' && (SOCKET_CODES.has(code) || TLS_CODES.test(code))) return 'transport';
  return 'refused';
}

/** Whether a failed store call may be answered from the local journal (see storeFaultOf). */
export function isTransportFault(err: unknown): boolean {
  return storeFaultOf(err) === 'transport';
}

/** Whether the error is a reply of a store server (so its first line may be shown to the caller). */
function isStoreReply(err: unknown): err is Error {
  return isRedisReply(err) || (err instanceof Error && sqlstateOf(err as { code?: unknown; severity?: unknown }) !== null);
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
