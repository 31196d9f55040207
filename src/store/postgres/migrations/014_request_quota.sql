-- 014: each tenant's Idempotency-Key records and the bytes of their kept
-- answers, so that a tenant's keys are bounded by count and bytes without
-- counting its rows on every request. Every write of a tenant's records
-- locks its row first (the one lock order: quota, then records) and updates
-- it in the same transaction; rows kept before this migration are counted
-- here once.
ALTER TABLE requests ADD COLUMN size bigint NOT NULL DEFAULT 0;
UPDATE requests SET size = octet_length(coalesce(body, ''));
CREATE TABLE request_quota (tenant text PRIMARY KEY, n_keys bigint NOT NULL, n_bytes bigint NOT NULL);
INSERT INTO request_quota (tenant, n_keys, n_bytes) SELECT tenant, count(*), sum(size) FROM requests GROUP BY tenant;
