import { ErrorReply } from '@redis/client';
import type { StoreFault } from '../fault.js';

/**
 * Redis replies that say the server cannot serve anyone right now, and will
 * again by itself: loading its data, a replica or a failover, a cluster
 * without its slots, a script running past its limit, no room for a client.
 */
const REDIS_UNREACHABLE = /^(LOADING|READONLY|CLUSTERDOWN|MASTERDOWN|TRYAGAIN|BUSY|NOREPLICAS|ERR max number of clients)\b/;
/** Redis replies that say it is full: it takes no more writes until memory (or the disk it saves to) is freed. */
const REDIS_FULL = /^(OOM|MISCONF)\b/;
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

/** Whether the error is a reply of a Redis server. */
export const isRedisReply = (err: unknown): err is Error => err instanceof ErrorReply;

/** What a Redis reply or a Redis client error says about the store (see storeFaultOf), or null when it is neither. */
export function redisFaultOf(err: Error): StoreFault | null {
  if (err instanceof ErrorReply) return REDIS_UNREACHABLE.test(err.message) ? 'transport' : REDIS_FULL.test(err.message) ? 'full' : 'refused';
  if (REDIS_CLIENT.has(err.constructor.name) || REDIS_CLIENT.has(err.name)) return 'transport';
  return null;
}
