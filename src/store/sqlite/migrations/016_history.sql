-- 016: each key's history (GET /v1/incidents/{key}/history). A row is an
-- event: its body (JSON, without its time), its time (`at`), and for a
-- folded run (`fold` set) the arrivals counted into it, the last one's time
-- and the longest gap between two; `seq` counts the key's events (its
-- first is 1), so an append trims only once a key holds more than the bound.
CREATE TABLE IF NOT EXISTS history (
  id INTEGER PRIMARY KEY, tenant TEXT NOT NULL, key TEXT NOT NULL,
  at INTEGER NOT NULL, last_at INTEGER NOT NULL, fold TEXT,
  count INTEGER NOT NULL DEFAULT 1, gap INTEGER NOT NULL DEFAULT 0, seq INTEGER NOT NULL,
  body TEXT NOT NULL, expires_at INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS history_key ON history (tenant, key, id);
CREATE INDEX IF NOT EXISTS history_expires_at ON history (expires_at);
