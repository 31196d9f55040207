-- 015: routing kept with the key. An incident's route is where its create
-- went (adapter names joined by commas; NULL: every adapter, as before a
-- routing tree); every outbox entry carries the route it is fanned out by.
ALTER TABLE incidents ADD COLUMN route TEXT;
ALTER TABLE outbox ADD COLUMN route TEXT;
