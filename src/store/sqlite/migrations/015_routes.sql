-- 015: routing kept with the key, and what a key shows. An incident's route is where its create
-- went (adapter names joined by commas; NULL: every adapter, as before a
-- routing tree); every outbox entry carries the route it is fanned out by.
ALTER TABLE incidents ADD COLUMN route TEXT;
-- What GET /v1/incidents/{key} shows: the identity its create received and
-- the latest arrival's summary and labels (JSON; NULL for none).
ALTER TABLE incidents ADD COLUMN identity TEXT;
ALTER TABLE incidents ADD COLUMN latest TEXT;
ALTER TABLE outbox ADD COLUMN route TEXT;
