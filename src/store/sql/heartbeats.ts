/**
 * Heartbeat statements both SQL backends run as written (see named.ts); each
 * is one statement, so one atomic step.
 */

const ONE = 'tenant = @tenant AND name = @name';
const COLUMNS = 'name, since, last_ping_at, missed_basis';

export const ENROLL_HEARTBEAT = `INSERT INTO heartbeats (tenant, name, since) VALUES (@tenant, @name, @now) ON CONFLICT (tenant, name) DO NOTHING`;

export const PING_HEARTBEAT = `
INSERT INTO heartbeats (tenant, name, since, last_ping_at) VALUES (@tenant, @name, @now, @now)
ON CONFLICT (tenant, name) DO UPDATE SET last_ping_at = excluded.last_ping_at
RETURNING ${COLUMNS}`;

export const CLAIM_MISS = `
UPDATE heartbeats SET missed_basis = @basis
WHERE ${ONE} AND COALESCE(last_ping_at, since) = @basis AND (missed_basis IS NULL OR missed_basis <> @basis)
RETURNING name`;

export const CLEAR_MISS = `UPDATE heartbeats SET missed_basis = NULL WHERE ${ONE} AND missed_basis = @basis`;

export const LIST_HEARTBEATS = `SELECT ${COLUMNS} FROM heartbeats WHERE tenant = @tenant ORDER BY name`;

export interface HeartbeatRow {
  name: string;
  since: number | string;
  last_ping_at: number | string | null;
  missed_basis: number | string | null;
}

/** A row as the contract has it (Postgres answers bigint as text). */
export const heartbeatOf = (r: HeartbeatRow) => ({
  name: r.name,
  since: Number(r.since),
  lastPingAt: r.last_ping_at === null ? null : Number(r.last_ping_at),
  missedBasis: r.missed_basis === null ? null : Number(r.missed_basis),
});
