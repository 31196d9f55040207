/**
 * Delivery statements both SQL backends run as written (see named.ts). Each
 * runs inside its operation's one transaction, which is what makes fan-out,
 * lease and settle atomic. What differs by dialect (the lease's pick, which
 * Postgres makes with SKIP LOCKED, and taking from the outbox) stays in each
 * backend's deliveries file.
 */

/** A delivery's place in fan-out order: its outbox id, the number before the dot of `outboxId.adapter`. */
export const seqOf = (id: string) => Number(id.slice(0, id.indexOf('.')));

export const DELIVERY_COLUMNS = `id, adapter, tenant, kind, action, key, severity, summary, data, at, n, retries, attempts, status, lease, dead_at AS "deadAt", held`;

/** out: the new n of this (kind, tenant, key, action), the counter marked as used now. */
export const NEXT_N = `
INSERT INTO delivery_counters (kind, tenant, key, action, n, used_at) VALUES (@kind, @tenant, @key, @action, 1, @now)
ON CONFLICT (kind, tenant, key, action) DO UPDATE SET n = delivery_counters.n + 1, used_at = excluded.used_at
RETURNING n`;

export const INSERT_DELIVERY = `
INSERT INTO deliveries (id, adapter, tenant, kind, action, key, severity, summary, data, at, n, due_at)
VALUES (@id, @adapter, @tenant, @kind, @action, @key, @severity, @summary, @data, @at, @n, @dueAt)`;

/** The delivery, if this lease still holds it. */
export const HELD = `SELECT ${DELIVERY_COLUMNS} FROM deliveries WHERE id = @id AND lease = @lease AND status = 'pending'`;

export const DELETE_DELIVERY = `DELETE FROM deliveries WHERE id = @id`;

/** The lease kept longer by its holder (the token still its own, the delivery pending). */
export const RENEW = `UPDATE deliveries SET due_at = @dueAt WHERE id = @id AND lease = @lease AND status = 'pending'`;

/** A failed attempt: retried at @dueAt, or parked (status dead, @deadAt); @notBefore raises its Retry-After floor (0: none). */
export const FAILED = `
UPDATE deliveries SET retries = retries + 1, attempts = @attempts, due_at = @dueAt, status = @status, dead_at = @deadAt, lease = '',
       not_before = CASE WHEN @notBefore > not_before THEN @notBefore ELSE not_before END WHERE id = @id`;

/** @tenant null: every tenant's; each with the count of later deliveries of its key to its adapter waiting behind it. */
export const deadLetters = (seq: (t: string) => string) => `
SELECT ${DELIVERY_COLUMNS},
       (SELECT count(*) FROM deliveries y
         WHERE y.kind = d.kind AND y.tenant = d.tenant AND y.key = d.key AND y.adapter = d.adapter AND ${seq('y')} > ${seq('d')}) AS waiting
  FROM deliveries d
 WHERE d.status = 'dead' AND (CAST(@tenant AS TEXT) IS NULL OR d.tenant = @tenant) ORDER BY d.dead_at, d.id LIMIT @limit`;

/** A dead letter deleted for good: the next delivery of its key to its adapter heads the line (it was due all along). */
export const DROP_DEAD = `
DELETE FROM deliveries WHERE id = @id AND status = 'dead' AND (CAST(@tenant AS TEXT) IS NULL OR tenant = @tenant)`;

export const RETRY_DEAD = `
UPDATE deliveries SET status = 'pending', retries = 0, due_at = CASE WHEN not_before > @now THEN not_before ELSE @now END, lease = '', dead_at = NULL
 WHERE id = @id AND status = 'dead' AND (CAST(@tenant AS TEXT) IS NULL OR tenant = @tenant)`;

/**
 * A re-fire's re-queue of the key's failing deliveries (`isFailing`: a failed
 * attempt, or dead) that no live lease holds, inside the claim's transaction:
 * due now, or at its Retry-After floor.
 */
export const REQUEUE_FAILING = `
UPDATE deliveries SET status = 'pending', retries = 0, due_at = CASE WHEN not_before > @now THEN not_before ELSE @now END, lease = '', dead_at = NULL
 WHERE kind = @kind AND tenant = @tenant AND key = @key AND (retries > 0 OR status = 'dead') AND (lease = '' OR due_at <= @now)`;

export const BACKLOG = `
SELECT CAST((SELECT count(*) FROM deliveries WHERE status = 'pending') AS INTEGER) AS pending,
       CAST((SELECT count(*) FROM deliveries WHERE status = 'pending' AND held = 1) AS INTEGER) AS held,
       CAST((SELECT count(*) FROM deliveries WHERE status = 'dead') AS INTEGER) AS dead,
       (SELECT min(at) FROM outbox) AS "outboxAt",
       (SELECT min(at) FROM deliveries WHERE status = 'pending' AND held = 0) AS "pendingAt"`;

/** Dead letters parked at or before @before, at most @batch. */
export const SWEEP_DEAD = `
DELETE FROM deliveries WHERE id IN (SELECT id FROM deliveries WHERE status = 'dead' AND dead_at <= @before LIMIT @batch)`;

/** Counters last used at or before @before (COUNTER_MEMORY_MS ago), at most @batch. */
export const SWEEP_COUNTERS = `
DELETE FROM delivery_counters WHERE (kind, tenant, key, action) IN (
  SELECT kind, tenant, key, action FROM delivery_counters WHERE used_at <= @before LIMIT @batch)`;

/**
 * Folding (DeliveryStore.fold), inside one transaction that holds the head's
 * lease. The younger pending deliveries of the head's key to its adapter,
 * oldest first; `seq` is each backend's fan-out order expression.
 */
export const youngerPending = (seq: (t: string) => string) => `
SELECT e.id, e.action FROM deliveries e
 WHERE e.kind = @kind AND e.tenant = @tenant AND e.key = @key AND e.adapter = @adapter
   AND e.status = 'pending' AND ${seq('e')} > @seq
 ORDER BY ${seq('e')}`;

/** The head takes the payload of the younger delivery @from (the latest state). */
export const TAKE_PAYLOAD = `
UPDATE deliveries SET severity = y.severity, summary = y.summary, data = y.data, at = y.at
  FROM deliveries y WHERE deliveries.id = @id AND y.id = @from`;

export const DUE_NOW = `UPDATE deliveries SET due_at = @now WHERE id = @id`;

/** Held: no lease, due again at @dueAt, no retry counted. */
export const HOLD = `UPDATE deliveries SET due_at = @dueAt, lease = '', held = 1 WHERE id = @id`;

export const RELEASE = `UPDATE deliveries SET held = 0 WHERE id = @id`;
