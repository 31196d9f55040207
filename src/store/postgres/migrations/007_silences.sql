-- 007: silences, shared by the replicas, and the version they watch.
CREATE TABLE silences (
  tenant text NOT NULL, id text NOT NULL,
  matchers text NOT NULL,
  starts_at bigint NOT NULL, ends_at bigint NOT NULL,
  created_by text NOT NULL, comment text NOT NULL,
  updated_at bigint NOT NULL,
  PRIMARY KEY (tenant, id)
);
CREATE INDEX silences_ends_at ON silences (ends_at);
CREATE TABLE silence_version (v bigint NOT NULL);
INSERT INTO silence_version (v) VALUES (0);
