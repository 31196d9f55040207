-- 012: each tenant's Idempotency-Key records and the bytes of their kept
-- answers, so that a tenant's keys are bounded by count and bytes without
-- counting its rows on every request. Every write of a tenant's records
-- updates its row in the same transaction; rows kept before this migration
-- are counted here once.
ALTER TABLE requests ADD COLUMN size INTEGER NOT NULL DEFAULT 0;
UPDATE requests SET size = length(CAST(coalesce(body, '') AS BLOB));
CREATE TABLE IF NOT EXISTS request_quota (
  tenant TEXT PRIMARY KEY, n_keys INTEGER NOT NULL, n_bytes INTEGER NOT NULL
) WITHOUT ROWID;
INSERT INTO request_quota (tenant, n_keys, n_bytes) SELECT tenant, count(*), sum(size) FROM requests GROUP BY tenant;
