-- 009: heartbeats (dead-man's switches): the last ping of each, and the miss a replica claimed.
CREATE TABLE IF NOT EXISTS heartbeats (
  tenant TEXT NOT NULL, name TEXT NOT NULL,
  since INTEGER NOT NULL, last_ping_at INTEGER, missed_basis INTEGER,
  PRIMARY KEY (tenant, name)
) WITHOUT ROWID;
