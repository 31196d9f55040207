-- 014: a delivery's line (its key's deliveries to one adapter) in fan-out order.
-- The lease picks only the oldest unsettled delivery of a line, asking of each
-- candidate whether an older one exists. Through (kind, tenant, key) that
-- question walked the line in the order of the id's text, where '10000.x'
-- sorts before '9999.x': once a line's ids crossed a digit, each candidate
-- walked past every newer delivery first, and a group with 5,000 queued
-- updates took one lease 2.5 s on the replica's only thread. Indexed by the
-- fan-out number itself it is one probe. The new index begins with the old
-- one's columns, so that one goes.
CREATE INDEX IF NOT EXISTS deliveries_line ON deliveries (kind, tenant, key, adapter, CAST(substr(id, 1, instr(id, '.') - 1) AS INTEGER));
DROP INDEX IF EXISTS deliveries_scope;
