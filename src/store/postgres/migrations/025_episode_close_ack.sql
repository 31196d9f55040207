-- 025: a close or an acknowledgement may name the episode it is for (the
-- live record's created_at, as an Opsgenie alert id read earlier carries
-- it). Another episode of the key, or none, is left as it is: an id a
-- client kept from yesterday's alert does not close today's. Checked in the
-- function's own step, under the key's lock.
-- The old signatures are dropped, not overloaded; the new parameter has a
-- default, so a replica of the previous release still calls them as before.
DROP FUNCTION oo_close_incident(text, text, text, bigint, bigint, bigint, boolean, text, text);
DROP FUNCTION oo_acknowledge_incident(text, text, text, bigint, boolean, text, text);

CREATE FUNCTION oo_close_incident(
  p_lock text, p_tenant text, p_key text, p_resolved_at bigint, p_resolution_ms bigint, p_now bigint,
  p_audit boolean, p_replica text, p_request_id text, p_episode bigint DEFAULT NULL,
  OUT fingerprint text, OUT created_at bigint, OUT last_seen_at bigint, OUT refires integer, OUT updates integer, OUT expires_at bigint)
LANGUAGE plpgsql AS $$
DECLARE
  r incidents%ROWTYPE;
  live boolean;
BEGIN
  PERFORM pg_advisory_xact_lock(hashtextextended(p_lock, 0));
  -- another episode than the one named (an id read earlier): nothing of this key is the caller's to close
  IF p_episode IS NOT NULL AND NOT EXISTS (SELECT 1 FROM incidents i WHERE i.tenant = p_tenant AND i.key = p_key AND i.created_at = p_episode) THEN
    RETURN;
  END IF;
  IF p_resolved_at IS NOT NULL THEN
    INSERT INTO resolutions AS s (tenant, key, ended_at, expires_at) VALUES (p_tenant, p_key, p_resolved_at, p_now + p_resolution_ms)
    ON CONFLICT (tenant, key) DO UPDATE SET
      ended_at = CASE WHEN s.expires_at > p_now AND s.ended_at > excluded.ended_at THEN s.ended_at ELSE excluded.ended_at END,
      expires_at = excluded.expires_at;
  END IF;
  DELETE FROM incidents i WHERE i.tenant = p_tenant AND i.key = p_key RETURNING * INTO r;
  live := FOUND AND r.expires_at > p_now;
  DELETE FROM acks a WHERE a.tenant = p_tenant AND a.key = p_key;
  IF live THEN
    fingerprint := r.fingerprint; created_at := r.created_at; last_seen_at := r.last_seen_at;
    refires := r.refires; updates := r.updates; expires_at := r.expires_at;
    INSERT INTO outbox (tenant, kind, action, key, severity, summary, data, at, route)
    VALUES (p_tenant, 'incident', 'close', p_key, split_part(r.fingerprint, '|', 1), '', json_build_object('fingerprint', r.fingerprint)::text, p_now, r.route);
    -- kept one TTL: as long as a journal may still replay an arrival from before this close
    INSERT INTO closes AS c (tenant, key, closed_at, expires_at)
    VALUES (p_tenant, p_key, p_now, p_now + GREATEST(r.expires_at - r.last_seen_at, 0))
    ON CONFLICT (tenant, key) DO UPDATE SET closed_at = GREATEST(c.closed_at, excluded.closed_at), expires_at = GREATEST(c.expires_at, excluded.expires_at);
  END IF;
  IF p_audit THEN
    INSERT INTO audit (at, tenant, kind, key, decision, reason, replica, request_id)
    VALUES (p_now, p_tenant, 'incidents', p_key, CASE WHEN live THEN 'CLOSE' ELSE 'NONE' END, CASE WHEN live THEN 'closed' ELSE 'not_live' END, p_replica, p_request_id);
  END IF;
END $$;

CREATE FUNCTION oo_acknowledge_incident(p_lock text, p_tenant text, p_key text, p_now bigint, p_audit boolean, p_replica text, p_request_id text,
  p_episode bigint DEFAULT NULL)
RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  r incidents%ROWTYPE;
  n integer;
BEGIN
  PERFORM pg_advisory_xact_lock(hashtextextended(p_lock, 0));
  SELECT * INTO r FROM incidents i WHERE i.tenant = p_tenant AND i.key = p_key;
  IF NOT FOUND OR r.expires_at <= p_now OR r.created_at <> COALESCE(p_episode, r.created_at) THEN RETURN 'absent'; END IF;
  INSERT INTO acks AS a (tenant, key, created_at) VALUES (p_tenant, p_key, r.created_at)
  ON CONFLICT (tenant, key) DO UPDATE SET created_at = excluded.created_at WHERE a.created_at <> excluded.created_at;
  GET DIAGNOSTICS n = ROW_COUNT;
  IF n = 0 THEN RETURN 'repeat'; END IF;
  INSERT INTO outbox (tenant, kind, action, key, severity, summary, data, at, route)
  VALUES (p_tenant, 'incident', 'update', p_key, split_part(r.fingerprint, '|', 1), 'acknowledged',
    json_build_object('fingerprint', r.fingerprint, 'acknowledged', true)::text, p_now, r.route);
  IF p_audit THEN
    INSERT INTO audit (at, tenant, kind, key, decision, reason, replica, request_id)
    VALUES (p_now, p_tenant, 'incidents', p_key, 'UPDATE', 'acknowledged', p_replica, p_request_id);
  END IF;
  RETURN 'acknowledged';
END $$;
