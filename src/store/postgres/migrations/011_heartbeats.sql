-- 011: heartbeats (dead-man's switches): the last ping of each, and the miss a replica claimed.
CREATE TABLE heartbeats (
  tenant text NOT NULL, name text NOT NULL,
  since bigint NOT NULL, last_ping_at bigint, missed_basis bigint,
  PRIMARY KEY (tenant, name)
);
