-- 010: which ticket a receiver opened for a key (adapter, tenant, kind, key → the receiver's id).
CREATE TABLE tickets (
  adapter text NOT NULL, tenant text NOT NULL, kind text NOT NULL, key text NOT NULL,
  ref text NOT NULL, expires_at bigint NOT NULL,
  PRIMARY KEY (adapter, tenant, kind, key)
);
CREATE INDEX tickets_expires_at ON tickets (expires_at);
