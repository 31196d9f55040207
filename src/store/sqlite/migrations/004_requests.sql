-- 004: producers' Idempotency-Keys and the answers they got (24 h).
CREATE TABLE IF NOT EXISTS requests (
  tenant TEXT NOT NULL, key TEXT NOT NULL, body_hash TEXT NOT NULL,
  status INTEGER, content_type TEXT, body TEXT,
  expires_at INTEGER NOT NULL,
  PRIMARY KEY (tenant, key)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS requests_expires_at ON requests (expires_at);
