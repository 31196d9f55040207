/**
 * Delivery statements. Each runs inside one GroupCommit transaction (see
 * sqlite-deliveries.ts), which is what makes fan-out, lease and settle atomic.
 */
const COLUMNS = `id, adapter, tenant, kind, action, key, severity, summary, data, at, n, retries, attempts, status, lease, dead_at AS deadAt`;

export const TAKE_OUTBOX = `SELECT id, tenant, kind, action, key, severity, summary, data, at FROM outbox ORDER BY id LIMIT ?`;
export const DELETE_OUTBOX = `DELETE FROM outbox WHERE id = ?`;

/** in: kind, tenant, key, action. out: the new n. */
export const NEXT_N = `
INSERT INTO delivery_counters (kind, tenant, key, action, n) VALUES (?, ?, ?, ?, 1)
ON CONFLICT (kind, tenant, key, action) DO UPDATE SET n = n + 1
RETURNING n`;

export const INSERT_DELIVERY = `
INSERT INTO deliveries (id, adapter, tenant, kind, action, key, severity, summary, data, at, n, due_at)
VALUES (@id, @adapter, @tenant, @kind, @action, @key, @severity, @summary, @data, @at, @n, @dueAt)`;

/** A delivery's place in fan-out order: its outbox id, the number before the dot of `outboxId.adapter`. */
const SEQ = (t: string) => `CAST(substr(${t}.id, 1, instr(${t}.id, '.') - 1) AS INTEGER)`;

/**
 * in: lease end, token, now, limit. One statement: the pick and the lease
 * cannot be split. Of one key's deliveries to one adapter only the oldest
 * unsettled one is picked: two calls in flight for one key would both find
 * no ticket and both create one.
 */
export const LEASE_DUE = `
UPDATE deliveries SET due_at = ?, lease = ?
 WHERE id IN (
   SELECT d.id FROM deliveries d
    WHERE d.status = 'pending' AND d.due_at <= ?
      AND NOT EXISTS (SELECT 1 FROM deliveries e
                       WHERE e.kind = d.kind AND e.tenant = d.tenant AND e.key = d.key AND e.adapter = d.adapter
                         AND e.status = 'pending' AND ${SEQ('e')} < ${SEQ('d')})
    ORDER BY d.due_at LIMIT ?)
RETURNING ${COLUMNS}`;

/** in: id, lease token. */
export const HELD = `SELECT ${COLUMNS} FROM deliveries WHERE id = ? AND lease = ? AND status = 'pending'`;
export const DELETE_DELIVERY = `DELETE FROM deliveries WHERE id = ?`;
/** in: attempts JSON, due_at, status, dead_at, id. */
export const FAILED = `
UPDATE deliveries SET retries = retries + 1, attempts = ?, due_at = ?, status = ?, dead_at = ?, lease = '' WHERE id = ?`;

/** in: tenant or null (twice), limit. */
export const DEAD_LETTERS = `
SELECT ${COLUMNS} FROM deliveries WHERE status = 'dead' AND (? IS NULL OR tenant = ?) ORDER BY dead_at, id LIMIT ?`;

/** in: now, id, tenant or null (twice). */
export const RETRY_DEAD = `
UPDATE deliveries SET status = 'pending', retries = 0, due_at = ?, lease = '', dead_at = NULL
 WHERE id = ? AND status = 'dead' AND (? IS NULL OR tenant = ?)`;

/** in: now, kind, tenant, key. A re-fire's re-queue of the key's failing deliveries that no live lease holds. */
export const REQUEUE_FAILING = `
UPDATE deliveries SET status = 'pending', retries = 0, due_at = @now, lease = '', dead_at = NULL
 WHERE kind = @kind AND tenant = @tenant AND key = @key AND (retries > 0 OR status = 'dead') AND (lease = '' OR due_at <= @now)`;

export const BACKLOG = `
SELECT (SELECT count(*) FROM deliveries WHERE status = 'pending') AS pending,
       (SELECT count(*) FROM deliveries WHERE status = 'dead') AS dead,
       (SELECT min(at) FROM outbox) AS outboxAt,
       (SELECT min(at) FROM deliveries WHERE status = 'pending') AS pendingAt`;
