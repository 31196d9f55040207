-- 003: fail-open for Postgres. A replayed journal entry leaves a marker, so a
-- replay that crashed half-way and runs again changes nothing.
CREATE TABLE reconciled (
  tenant text NOT NULL, key text NOT NULL, journal_id text NOT NULL, outcome text NOT NULL, expires_at bigint NOT NULL,
  PRIMARY KEY (tenant, key, journal_id)
);
CREATE INDEX reconciled_expires_at ON reconciled (expires_at);
