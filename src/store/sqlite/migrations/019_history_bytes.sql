-- 019: the bytes each tenant's kept history events hold (their bodies,
-- UTF-8), kept in the same transaction as every append, trim and sweep, so
-- an append can refuse an event past history.max_bytes_per_tenant. Counted
-- once here from what the histories already hold.
CREATE TABLE IF NOT EXISTS history_bytes (tenant TEXT PRIMARY KEY, bytes INTEGER NOT NULL);
INSERT OR IGNORE INTO history_bytes (tenant, bytes)
  SELECT tenant, SUM(length(CAST(body AS BLOB))) FROM history GROUP BY tenant;
