-- 004: when a key's per-action counter (the n of Idempotency-Key) was last
-- used, so that counters unused for their lifetime are swept, as on every
-- other backend. Counters that predate the column count as used at the
-- upgrade, so none is forgotten sooner than a whole lifetime after it.
ALTER TABLE delivery_counters ADD COLUMN used_at bigint NOT NULL DEFAULT 0;
UPDATE delivery_counters SET used_at = (extract(epoch FROM now()) * 1000)::bigint;
CREATE INDEX delivery_counters_used_at ON delivery_counters (used_at);
