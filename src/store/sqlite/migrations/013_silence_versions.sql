-- 013: each silence remembers the version its last write made, so a replica
-- reloads only what changed since the version it loaded (rows written before
-- this migration count as written at version 0: the first full load reads them).
ALTER TABLE silences ADD COLUMN v INTEGER NOT NULL DEFAULT 0;
CREATE INDEX IF NOT EXISTS silences_v ON silences (v);
-- A tenant's open-silence count (every create checks it) and its ended ones
-- (a create trims them) read from the index alone: the rows are up to 16 KB,
-- and reading ends_at from the table follows each row past its matchers.
CREATE INDEX IF NOT EXISTS silences_tenant_ends_at ON silences (tenant, ends_at);
