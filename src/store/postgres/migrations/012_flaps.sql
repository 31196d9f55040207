-- 012: each key's recent creates and closes (flapping detection).
CREATE TABLE flaps (
  id bigserial PRIMARY KEY, tenant text NOT NULL, key text NOT NULL,
  at bigint NOT NULL, action text NOT NULL, expires_at bigint NOT NULL
);
CREATE INDEX flaps_key ON flaps (tenant, key, id);
CREATE INDEX flaps_expires_at ON flaps (expires_at);
