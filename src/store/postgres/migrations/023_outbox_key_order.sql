-- 023: the outbox looked up by key. A lease skips a delivery while an older
-- entry of its key is still in the outbox: this index answers that question.
CREATE INDEX IF NOT EXISTS outbox_by_key ON outbox (kind, tenant, key, id);
