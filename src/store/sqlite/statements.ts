/**
 * One statement per operation. Each decision runs these inside a single
 * BEGIN IMMEDIATE transaction (see group-commit.ts), which holds SQLite's write
 * lock across the read and the write: that transaction is the atomic step, even
 * with several processes sharing the file.
 */

/** in: tenant, key. out: the row or nothing. */
export const SELECT_INCIDENT = `
SELECT tenant, key, fingerprint, created_at AS createdAt, last_seen_at AS lastSeenAt,
       refires, updates, expires_at AS expiresAt
  FROM incidents WHERE tenant = ? AND key = ?`;

/** in: the whole record. Claims the key or replaces the record of the key. */
export const UPSERT_INCIDENT = `
INSERT INTO incidents (tenant, key, fingerprint, created_at, last_seen_at, refires, updates, expires_at)
VALUES (@tenant, @key, @fingerprint, @createdAt, @lastSeenAt, @refires, @updates, @expiresAt)
ON CONFLICT (tenant, key) DO UPDATE SET
  fingerprint = excluded.fingerprint, created_at = excluded.created_at,
  last_seen_at = excluded.last_seen_at, refires = excluded.refires,
  updates = excluded.updates, expires_at = excluded.expires_at`;

/** in: tenant, key. A close deletes live and expired-in-grace records alike; the caller reads the row first. */
export const DELETE_INCIDENT = `DELETE FROM incidents WHERE tenant = ? AND key = ?`;

/** in: now. */
export const COUNT_LIVE_INCIDENTS = `SELECT count(*) AS n FROM incidents WHERE expires_at > ?`;

/** in: now minus the grace, batch size. Small batches keep the write lock short. */
export const SWEEP_EXPIRED_INCIDENTS = `
DELETE FROM incidents WHERE (tenant, key) IN (
  SELECT tenant, key FROM incidents WHERE expires_at <= ? LIMIT ?)`;

/**
 * in: tenant, key, expires_at, now. Claims the window key unless a live claim
 * holds it; changes() is 1 exactly when this call claimed it.
 */
export const CLAIM_WINDOW = `
INSERT INTO windows (tenant, key, expires_at) VALUES (?, ?, ?)
ON CONFLICT (tenant, key) DO UPDATE SET expires_at = excluded.expires_at
WHERE windows.expires_at <= ?`;

/** in: now, batch. */
export const SWEEP_WINDOWS = `
DELETE FROM windows WHERE (tenant, key) IN (SELECT tenant, key FROM windows WHERE expires_at <= ? LIMIT ?)`;

/** in: an outbox entry with `data` as JSON text. Always inside the deciding transaction. */
export const APPEND_OUTBOX = `
INSERT INTO outbox (tenant, kind, action, key, severity, summary, data, at)
VALUES (@tenant, @kind, @action, @key, @severity, @summary, @data, @at)`;

export const LIST_OUTBOX = `SELECT tenant, kind, action, key, severity, summary, data, at FROM outbox ORDER BY id`;

/** in: tenant, key, the live episode's created_at. changes() is 1 exactly when this episode was not acknowledged yet. */
export const ACKNOWLEDGE = `
INSERT INTO acks (tenant, key, created_at) VALUES (?, ?, ?)
ON CONFLICT (tenant, key) DO UPDATE SET created_at = excluded.created_at WHERE acks.created_at <> excluded.created_at`;

/** in: tenant, key. */
export const DELETE_ACK = `DELETE FROM acks WHERE tenant = ? AND key = ?`;

/** in: batch. Markers whose incident is gone (swept). */
export const SWEEP_ACKS = `
DELETE FROM acks WHERE (tenant, key) IN (
  SELECT a.tenant, a.key FROM acks a LEFT JOIN incidents i ON i.tenant = a.tenant AND i.key = a.key WHERE i.key IS NULL LIMIT ?)`;

/** in: tenant, key, now. The recorded resolution still remembered, if any. */
export const SELECT_RESOLUTION = `SELECT ended_at AS endedAt FROM resolutions WHERE tenant = ? AND key = ? AND expires_at > ?`;

/** in: tenant, key, endedAt, expiresAt, now. Keeps the later end (of a still remembered one). */
export const RECORD_RESOLUTION = `
INSERT INTO resolutions (tenant, key, ended_at, expires_at) VALUES (@tenant, @key, @endedAt, @expiresAt)
ON CONFLICT (tenant, key) DO UPDATE SET
  ended_at = CASE WHEN resolutions.expires_at > @now AND resolutions.ended_at > excluded.ended_at THEN resolutions.ended_at ELSE excluded.ended_at END,
  expires_at = excluded.expires_at`;

/** in: now, batch. */
export const SWEEP_RESOLUTIONS = `
DELETE FROM resolutions WHERE (tenant, key) IN (SELECT tenant, key FROM resolutions WHERE expires_at <= ? LIMIT ?)`;

/** in: tenant, now, limit. */
export const LIST_INCIDENTS = `
SELECT tenant, key, fingerprint, created_at AS createdAt, last_seen_at AS lastSeenAt,
       refires, updates, expires_at AS expiresAt
  FROM incidents WHERE tenant = ? AND expires_at > ? ORDER BY last_seen_at DESC LIMIT ?`;
