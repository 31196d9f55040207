-- 016: an Idempotency-Key's begin, finish and abandon as server-side
-- functions, each one round trip. As separate statements in a transaction
-- each held its tenant's quota row locked across five round trips, so one
-- tenant's keyed requests ran one at a time at the pace of the network
-- (a sixth of its unkeyed throughput); a function holds the lock for one
-- statement. The rules are the TypeScript ones in src/store/contract/requests.ts
-- (beginQuota, finishQuota), written again here; the contract suite holds
-- them together. The lock order is the same: quota row, then records.

-- The tenant's quota row, made if absent and locked until the transaction ends.
CREATE FUNCTION oo_request_quota(p_tenant text, OUT n_keys bigint, OUT n_bytes bigint)
LANGUAGE sql AS $$
  INSERT INTO request_quota (tenant, n_keys, n_bytes) VALUES (p_tenant, 0, 0)
  ON CONFLICT (tenant) DO UPDATE SET n_keys = request_quota.n_keys
  RETURNING n_keys, n_bytes
$$;

-- A live record answers as it is (in flight, or done with its answer);
-- otherwise the key is recorded in flight until p_until unless the tenant
-- already holds p_max_keys keys ('full'). An expired record is taken over:
-- it was counted already, and its bytes are freed.
CREATE FUNCTION oo_request_begin(
  p_tenant text, p_key text, p_body_hash text, p_now bigint, p_until bigint, p_max_keys bigint,
  OUT state text, OUT body_hash text, OUT status integer, OUT content_type text, OUT body text)
LANGUAGE plpgsql AS $$
DECLARE
  q record;
  r requests%ROWTYPE;
  held boolean;
BEGIN
  SELECT * INTO q FROM oo_request_quota(p_tenant);
  SELECT * INTO r FROM requests WHERE tenant = p_tenant AND key = p_key;
  held := FOUND;
  IF held AND r.expires_at > p_now THEN
    state := CASE WHEN r.status IS NULL THEN 'in_flight' ELSE 'done' END;
    body_hash := r.body_hash; status := r.status; content_type := r.content_type; body := r.body;
    RETURN;
  END IF;
  IF NOT held AND q.n_keys >= p_max_keys THEN
    state := 'full';
    RETURN;
  END IF;
  INSERT INTO requests (tenant, key, body_hash, status, content_type, body, size, expires_at)
  VALUES (p_tenant, p_key, p_body_hash, NULL, NULL, NULL, 0, p_until)
  ON CONFLICT (tenant, key) DO UPDATE SET body_hash = excluded.body_hash, status = NULL,
    content_type = NULL, body = NULL, size = 0, expires_at = excluded.expires_at;
  UPDATE request_quota
     SET n_keys = n_keys + CASE WHEN held THEN 0 ELSE 1 END, n_bytes = n_bytes - CASE WHEN held THEN r.size ELSE 0 END
   WHERE tenant = p_tenant;
  state := 'new';
END $$;

-- Keeps the answer until p_until: whole when the tenant's bytes stay within
-- p_max_bytes with it (the key's own record freeing its bytes), else its
-- digest form. A record swept or abandoned meanwhile is counted again.
CREATE FUNCTION oo_request_finish(
  p_tenant text, p_key text, p_body_hash text, p_until bigint, p_max_bytes bigint,
  p_whole_status integer, p_whole_type text, p_whole_body text, p_whole_size bigint,
  p_digest_status integer, p_digest_type text, p_digest_body text, p_digest_size bigint)
RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
  q record;
  freed bigint;
  held boolean;
  whole boolean;
  kept_size bigint;
BEGIN
  SELECT * INTO q FROM oo_request_quota(p_tenant);
  SELECT size INTO freed FROM requests WHERE tenant = p_tenant AND key = p_key;
  held := FOUND;
  IF NOT held THEN freed := 0; END IF;
  whole := q.n_bytes - freed + p_whole_size <= p_max_bytes;
  kept_size := CASE WHEN whole THEN p_whole_size ELSE p_digest_size END;
  INSERT INTO requests (tenant, key, body_hash, status, content_type, body, size, expires_at)
  VALUES (p_tenant, p_key, p_body_hash,
    CASE WHEN whole THEN p_whole_status ELSE p_digest_status END,
    CASE WHEN whole THEN p_whole_type ELSE p_digest_type END,
    CASE WHEN whole THEN p_whole_body ELSE p_digest_body END,
    kept_size, p_until)
  ON CONFLICT (tenant, key) DO UPDATE SET body_hash = excluded.body_hash, status = excluded.status,
    content_type = excluded.content_type, body = excluded.body, size = excluded.size, expires_at = excluded.expires_at;
  UPDATE request_quota
     SET n_keys = n_keys + CASE WHEN held THEN 0 ELSE 1 END, n_bytes = n_bytes + kept_size - freed
   WHERE tenant = p_tenant;
  RETURN CASE WHEN whole THEN 'whole' ELSE 'digest' END;
END $$;

-- Forgets a key still in flight with this body (the request failed before an answer).
CREATE FUNCTION oo_request_abandon(p_tenant text, p_key text, p_body_hash text) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
  gone bigint;
BEGIN
  PERFORM oo_request_quota(p_tenant);
  DELETE FROM requests WHERE tenant = p_tenant AND key = p_key AND body_hash = p_body_hash AND status IS NULL
  RETURNING size INTO gone;
  IF FOUND THEN
    UPDATE request_quota SET n_keys = n_keys - 1, n_bytes = n_bytes - gone WHERE tenant = p_tenant;
  END IF;
END $$;
