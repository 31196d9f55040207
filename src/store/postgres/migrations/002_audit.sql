-- 002: the audit trail of ledger mode: every decision of an input kept
-- forever, appended in the decision's own transaction.
CREATE TABLE audit (
  id bigserial PRIMARY KEY,
  at bigint NOT NULL,
  tenant text NOT NULL,
  kind text NOT NULL,
  key text NOT NULL,
  decision text NOT NULL,
  reason text NOT NULL,
  replica text NOT NULL,
  request_id text NOT NULL
);
CREATE INDEX audit_key ON audit (tenant, key, id);
