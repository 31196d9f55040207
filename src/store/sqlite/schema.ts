/**
 * SQLite schema, applied idempotently at open. Times are integer milliseconds.
 * WITHOUT ROWID: the primary key is the only access path, and the table stays
 * a single B-tree (smaller file, one lookup per decision).
 */
export const SCHEMA_VERSION = 1;

export const SCHEMA = `
CREATE TABLE IF NOT EXISTS incidents (
  tenant       TEXT    NOT NULL,
  key          TEXT    NOT NULL,
  fingerprint  TEXT    NOT NULL,
  created_at   INTEGER NOT NULL,
  last_seen_at INTEGER NOT NULL,
  refires      INTEGER NOT NULL,
  updates      INTEGER NOT NULL,
  expires_at   INTEGER NOT NULL,
  PRIMARY KEY (tenant, key)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS incidents_expires_at ON incidents (expires_at);
`;
