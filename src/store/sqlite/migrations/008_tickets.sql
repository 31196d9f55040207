-- 008: which ticket a receiver opened for a key (adapter, tenant, kind, key → the receiver's id).
CREATE TABLE IF NOT EXISTS tickets (
  adapter TEXT NOT NULL, tenant TEXT NOT NULL, kind TEXT NOT NULL, key TEXT NOT NULL,
  ref TEXT NOT NULL, expires_at INTEGER NOT NULL,
  PRIMARY KEY (adapter, tenant, kind, key)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS tickets_expires_at ON tickets (expires_at);
