-- 010: each key's recent creates and closes (flapping detection).
CREATE TABLE IF NOT EXISTS flaps (
  id INTEGER PRIMARY KEY, tenant TEXT NOT NULL, key TEXT NOT NULL,
  at INTEGER NOT NULL, action TEXT NOT NULL, expires_at INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS flaps_key ON flaps (tenant, key, id);
CREATE INDEX IF NOT EXISTS flaps_expires_at ON flaps (expires_at);
