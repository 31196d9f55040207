-- 005: producers' Idempotency-Keys and the answers they got (24 h).
CREATE TABLE requests (
  tenant text NOT NULL, key text NOT NULL, body_hash text NOT NULL,
  status integer, content_type text, body text,
  expires_at bigint NOT NULL,
  PRIMARY KEY (tenant, key)
);
CREATE INDEX requests_expires_at ON requests (expires_at);
