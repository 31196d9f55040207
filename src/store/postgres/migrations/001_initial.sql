-- 001: the whole contract's state. Times are integer milliseconds (the
-- injected clock's), as in the SQLite store.
CREATE TABLE incidents (
  tenant text NOT NULL, key text NOT NULL, fingerprint text NOT NULL,
  created_at bigint NOT NULL, last_seen_at bigint NOT NULL,
  refires integer NOT NULL, updates integer NOT NULL, expires_at bigint NOT NULL,
  PRIMARY KEY (tenant, key)
);
CREATE INDEX incidents_expires_at ON incidents (expires_at);
CREATE INDEX incidents_last_seen ON incidents (tenant, last_seen_at DESC);

CREATE TABLE acks (tenant text NOT NULL, key text NOT NULL, created_at bigint NOT NULL, PRIMARY KEY (tenant, key));
CREATE TABLE resolutions (tenant text NOT NULL, key text NOT NULL, ended_at bigint NOT NULL, expires_at bigint NOT NULL, PRIMARY KEY (tenant, key));

CREATE TABLE devices (
  tenant text NOT NULL, device text NOT NULL, boot text NOT NULL, sequence bigint NOT NULL,
  state text NOT NULL, observed_at bigint NOT NULL, gaps bigint NOT NULL DEFAULT 0,
  PRIMARY KEY (tenant, device)
);
CREATE INDEX devices_observed_at ON devices (observed_at);
CREATE TABLE device_boots (tenant text NOT NULL, device text NOT NULL, boot text NOT NULL, PRIMARY KEY (tenant, device, boot));
CREATE TABLE events_seen (
  tenant text NOT NULL, device text NOT NULL, boot text NOT NULL, sequence bigint NOT NULL, expires_at bigint NOT NULL,
  PRIMARY KEY (tenant, device, boot, sequence)
);
CREATE INDEX events_seen_expires_at ON events_seen (expires_at);

CREATE TABLE windows (tenant text NOT NULL, key text NOT NULL, expires_at bigint NOT NULL, PRIMARY KEY (tenant, key));
CREATE INDEX windows_expires_at ON windows (expires_at);

CREATE TABLE outbox (
  id bigserial PRIMARY KEY, tenant text NOT NULL, kind text NOT NULL, action text NOT NULL, key text NOT NULL,
  severity text NOT NULL, summary text NOT NULL, data text NOT NULL, at bigint NOT NULL
);

CREATE TABLE deliveries (
  id text PRIMARY KEY, adapter text NOT NULL,
  tenant text NOT NULL, kind text NOT NULL, action text NOT NULL, key text NOT NULL,
  severity text NOT NULL, summary text NOT NULL, data text NOT NULL, at bigint NOT NULL,
  n integer NOT NULL, retries integer NOT NULL DEFAULT 0, attempts text NOT NULL DEFAULT '[]',
  status text NOT NULL DEFAULT 'pending', due_at bigint NOT NULL, lease text NOT NULL DEFAULT '', dead_at bigint
);
CREATE INDEX deliveries_due ON deliveries (status, due_at);
CREATE INDEX deliveries_scope ON deliveries (kind, tenant, key);
CREATE TABLE delivery_counters (
  kind text NOT NULL, tenant text NOT NULL, key text NOT NULL, action text NOT NULL, n integer NOT NULL,
  PRIMARY KEY (kind, tenant, key, action)
);
