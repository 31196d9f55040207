-- 001: the schema as first shipped. IF NOT EXISTS throughout: a file made
-- before migrations were numbered (user_version 0) takes it as a no-op.
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

CREATE TABLE IF NOT EXISTS devices (
  tenant      TEXT    NOT NULL,
  device      TEXT    NOT NULL,
  boot        TEXT    NOT NULL,
  sequence    INTEGER NOT NULL,
  state       TEXT    NOT NULL,
  observed_at INTEGER NOT NULL,
  PRIMARY KEY (tenant, device)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS devices_observed_at ON devices (observed_at);
CREATE TABLE IF NOT EXISTS device_boots (
  tenant TEXT NOT NULL, device TEXT NOT NULL, boot TEXT NOT NULL,
  PRIMARY KEY (tenant, device, boot)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS events_seen (
  tenant TEXT NOT NULL, device TEXT NOT NULL, boot TEXT NOT NULL, sequence INTEGER NOT NULL,
  expires_at INTEGER NOT NULL,
  PRIMARY KEY (tenant, device, boot, sequence)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS events_seen_expires_at ON events_seen (expires_at);
-- Missing sequence numbers per device, in all (the dashboard's gaps column).
CREATE TABLE IF NOT EXISTS device_gaps (
  tenant TEXT NOT NULL, device TEXT NOT NULL, gaps INTEGER NOT NULL,
  PRIMARY KEY (tenant, device)
) WITHOUT ROWID;
-- Windowed claims (SPC violations).
CREATE TABLE IF NOT EXISTS windows (
  tenant TEXT NOT NULL, key TEXT NOT NULL, expires_at INTEGER NOT NULL,
  PRIMARY KEY (tenant, key)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS windows_expires_at ON windows (expires_at);
-- The outbox: every entry is written in the transaction that made its decision.
CREATE TABLE IF NOT EXISTS outbox (
  id       INTEGER PRIMARY KEY AUTOINCREMENT,
  tenant   TEXT    NOT NULL,
  kind     TEXT    NOT NULL,
  action   TEXT    NOT NULL,
  key      TEXT    NOT NULL,
  severity TEXT    NOT NULL,
  summary  TEXT    NOT NULL,
  data     TEXT    NOT NULL,
  at       INTEGER NOT NULL
);
-- The last resolution of an alert episode (Alertmanager), to recognise a late firing of it.
CREATE TABLE IF NOT EXISTS resolutions (
  tenant TEXT NOT NULL, key TEXT NOT NULL, ended_at INTEGER NOT NULL, expires_at INTEGER NOT NULL,
  PRIMARY KEY (tenant, key)
) WITHOUT ROWID;
-- Acknowledged incident episodes (PagerDuty acknowledge): the episode is its created_at.
CREATE TABLE IF NOT EXISTS acks (
  tenant TEXT NOT NULL, key TEXT NOT NULL, created_at INTEGER NOT NULL,
  PRIMARY KEY (tenant, key)
) WITHOUT ROWID;
-- Delivery state: one row per (outbox entry, adapter), fanned out from the
-- outbox by the worker; due_at doubles as the lease's end while leased.
CREATE TABLE IF NOT EXISTS deliveries (
  id       TEXT    PRIMARY KEY,
  adapter  TEXT    NOT NULL,
  tenant   TEXT    NOT NULL,
  kind     TEXT    NOT NULL,
  action   TEXT    NOT NULL,
  key      TEXT    NOT NULL,
  severity TEXT    NOT NULL,
  summary  TEXT    NOT NULL,
  data     TEXT    NOT NULL,
  at       INTEGER NOT NULL,
  n        INTEGER NOT NULL,
  retries  INTEGER NOT NULL DEFAULT 0,
  attempts TEXT    NOT NULL DEFAULT '[]',
  status   TEXT    NOT NULL DEFAULT 'pending',
  due_at   INTEGER NOT NULL,
  lease    TEXT    NOT NULL DEFAULT '',
  dead_at  INTEGER
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS deliveries_due ON deliveries (status, due_at);
CREATE INDEX IF NOT EXISTS deliveries_scope ON deliveries (kind, tenant, key);
-- n of Idempotency-Key key:action:n, per key and action.
CREATE TABLE IF NOT EXISTS delivery_counters (
  kind TEXT NOT NULL, tenant TEXT NOT NULL, key TEXT NOT NULL, action TEXT NOT NULL, n INTEGER NOT NULL,
  PRIMARY KEY (kind, tenant, key, action)
) WITHOUT ROWID;
