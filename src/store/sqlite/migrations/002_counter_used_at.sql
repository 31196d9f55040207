-- 002: when a key's per-action counter (the n of Idempotency-Key) was last
-- used, so that counters unused for their lifetime are swept here as on every
-- other backend. Counters that predate the column count as used at the
-- upgrade, so none is forgotten sooner than a whole lifetime after it.
ALTER TABLE delivery_counters ADD COLUMN used_at INTEGER NOT NULL DEFAULT 0;
UPDATE delivery_counters SET used_at = CAST(strftime('%s', 'now') AS INTEGER) * 1000;
CREATE INDEX delivery_counters_used_at ON delivery_counters (used_at);
