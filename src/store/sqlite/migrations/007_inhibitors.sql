-- 007: live incidents that can inhibit others, by rule and the values of its `equal` labels.
CREATE TABLE IF NOT EXISTS inhibitors (
  tenant TEXT NOT NULL, rule TEXT NOT NULL, tuple TEXT NOT NULL, source TEXT NOT NULL,
  expires_at INTEGER NOT NULL,
  PRIMARY KEY (tenant, rule, tuple, source)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS inhibitors_source ON inhibitors (tenant, source);
CREATE INDEX IF NOT EXISTS inhibitors_expires_at ON inhibitors (expires_at);
