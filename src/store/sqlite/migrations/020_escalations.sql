-- 020: the escalation step last written for each key's episode (its
-- created_at), so that a step is written once, never after the episode's
-- acknowledgement or close (the same transaction reads both).
CREATE TABLE IF NOT EXISTS escalations (
  tenant TEXT NOT NULL, key TEXT NOT NULL, created_at INTEGER NOT NULL, step INTEGER NOT NULL,
  PRIMARY KEY (tenant, key)
) WITHOUT ROWID;
