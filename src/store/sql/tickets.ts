/**
 * Ticket-id statements both SQL backends run as written (see named.ts); each
 * is one statement, so one atomic step.
 */

const OWNER = 'adapter = @adapter AND tenant = @tenant AND kind = @kind AND key = @key';

/** The live id, kept for longer; no row when there is none. */
export const FIND_TICKET = `
UPDATE tickets SET expires_at = @until WHERE ${OWNER} AND expires_at > @now RETURNING ref`;

/** Records @ref unless a live id is there; either way answers the id that holds. */
export const CLAIM_TICKET = `
INSERT INTO tickets (adapter, tenant, kind, key, ref, expires_at) VALUES (@adapter, @tenant, @kind, @key, @ref, @until)
ON CONFLICT (adapter, tenant, kind, key) DO UPDATE
  SET ref = CASE WHEN tickets.expires_at <= @now THEN excluded.ref ELSE tickets.ref END, expires_at = excluded.expires_at
RETURNING ref`;

export const FORGET_TICKET = `DELETE FROM tickets WHERE ${OWNER} AND ref = @ref`;

export const SWEEP_TICKETS = `
DELETE FROM tickets WHERE (adapter, tenant, kind, key) IN (SELECT adapter, tenant, kind, key FROM tickets WHERE expires_at <= @now LIMIT @batch)`;
