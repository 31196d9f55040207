-- 009: live incidents that can inhibit others, by rule and the values of its `equal` labels.
CREATE TABLE inhibitors (
  tenant text NOT NULL, rule text NOT NULL, tuple text NOT NULL, source text NOT NULL,
  expires_at bigint NOT NULL,
  PRIMARY KEY (tenant, rule, tuple, source)
);
CREATE INDEX inhibitors_source ON inhibitors (tenant, source);
CREATE INDEX inhibitors_expires_at ON inhibitors (expires_at);
