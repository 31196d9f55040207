-- 005: silences, shared by the replicas, and the version they watch.
CREATE TABLE IF NOT EXISTS silences (
  tenant TEXT NOT NULL, id TEXT NOT NULL,
  matchers TEXT NOT NULL,
  starts_at INTEGER NOT NULL, ends_at INTEGER NOT NULL,
  created_by TEXT NOT NULL, comment TEXT NOT NULL,
  updated_at INTEGER NOT NULL,
  PRIMARY KEY (tenant, id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS silences_ends_at ON silences (ends_at);
CREATE TABLE IF NOT EXISTS silence_version (v INTEGER NOT NULL);
INSERT INTO silence_version (v) SELECT 0 WHERE NOT EXISTS (SELECT 1 FROM silence_version);
