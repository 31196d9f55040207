-- 023: the outbox looked up by key. A fan-out takes only the oldest entry of
-- each key (an entry whose older sibling another replica is fanning out
-- waits, so a key's deliveries are numbered in the order they were decided),
-- and a lease skips a delivery while an older entry of its key is still in
-- the outbox: both ask "is there an older entry of this key", which this index answers.
CREATE INDEX IF NOT EXISTS outbox_by_key ON outbox (kind, tenant, key, id);
