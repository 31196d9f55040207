import type { StoreFault } from '../fault.js';

/** SQLSTATEs of a lost or refused connection: class 08, the server shutting down or starting (57P01-57P04), too many connections. */
const PG_UNREACHABLE = /^(08...|57P0[1-4]|53300)$/;
/** Out of disk or memory: 53100, 53200. (53300, too many connections, is the store's door, not its room.) */
const PG_FULL = /^53[12]00$/;
/** The Postgres client's messages for a connection that ended or never came (they carry no SQLSTATE). */
const PG_CLIENT = /^(Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Connection ended unexpectedly)/;

/** The SQLSTATE of a Postgres server's error, or null for any other error. */
export const sqlstateOf = (e: { code?: unknown; severity?: unknown }) =>
  typeof e.code === 'string' && typeof e.severity === 'string' && /^[0-9A-Z]{5}$/.test(e.code) ? e.code : null;

/** What a Postgres server error or a pg client error says about the store (see storeFaultOf), or null when it is neither. */
export function pgFaultOf(err: Error): StoreFault | null {
  const state = sqlstateOf(err as { code?: unknown; severity?: unknown });
  if (state !== null) return PG_UNREACHABLE.test(state) ? 'transport' : PG_FULL.test(state) ? 'full' : 'refused';
  if (PG_CLIENT.test(err.message)) return 'transport';
  return null;
}
