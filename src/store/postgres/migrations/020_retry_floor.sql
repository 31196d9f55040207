-- 020: a delivery's Retry-After floor (ms, store clock; 0: none). A
-- receiver's Retry-After is kept here so that a re-fire's re-queue (and a
-- dead letter's retry) makes the delivery due no sooner than the receiver
-- asked; the re-queue inside the decision functions honours it.
ALTER TABLE deliveries ADD COLUMN IF NOT EXISTS not_before bigint NOT NULL DEFAULT 0;

CREATE OR REPLACE FUNCTION oo_requeue_failing(p_kind text, p_tenant text, p_key text, p_now bigint) RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE n integer;
BEGIN
  UPDATE deliveries SET status = 'pending', retries = 0, due_at = GREATEST(p_now, not_before), lease = '', dead_at = NULL
   WHERE kind = p_kind AND tenant = p_tenant AND key = p_key AND (retries > 0 OR status = 'dead') AND (lease = '' OR due_at <= p_now);
  GET DIAGNOSTICS n = ROW_COUNT;
  RETURN n;
END $$;
