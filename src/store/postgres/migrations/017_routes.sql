-- 017: routing kept with the key, and what a key shows. An incident's route
-- is where its create went (adapter names joined by commas; NULL: every
-- adapter, as before a routing tree): the decide function sets it on a
-- create and keeps it on every later change, and the close, the
-- acknowledgement and the update entries carry it. Every outbox entry
-- carries the route it is fanned out by. `identity` (JSON) is what the
-- create received to identify it, `latest` (JSON) the latest arrival's
-- summary and labels: what GET /v1/incidents/{key} shows. The functions
-- that take these take them as last arguments defaulting to NULL, so a
-- replica of the version before still calls them as it did.

ALTER TABLE incidents ADD COLUMN route text;
ALTER TABLE incidents ADD COLUMN identity text;
ALTER TABLE incidents ADD COLUMN latest text;
ALTER TABLE outbox ADD COLUMN route text;

DROP FUNCTION oo_decide_incident(text, text, text, text, bigint, bigint, bigint, bigint, text, text, text, bigint, text, text);
DROP FUNCTION oo_claim_window(text, text, text, bigint, bigint, text, text, text, boolean, text, text);
DROP FUNCTION oo_reconcile_incident(text, text, text, text, integer, integer, bigint, text, bigint, bigint, boolean, text);
DROP FUNCTION oo_apply_event(text, text, text, text, bigint, text, bigint, text, bigint, bigint, boolean, text, text);

-- Claim-or-compare (migration 006), keeping the key's route.
CREATE FUNCTION oo_decide_incident(
  p_lock text, p_tenant text, p_key text, p_fingerprint text, p_ttl_ms bigint, p_grace_ms bigint, p_now bigint,
  p_episode_started_at bigint, p_severity text, p_summary text, p_data text,
  p_race_ms bigint, p_replica text, p_request_id text,
  p_route text DEFAULT NULL, p_identity text DEFAULT NULL, p_latest text DEFAULT NULL,
  OUT outcome text, OUT previous_fingerprint text, OUT expired_updates integer,
  OUT fingerprint text, OUT created_at bigint, OUT last_seen_at bigint, OUT refires integer, OUT updates integer, OUT expires_at bigint,
  OUT route text, OUT identity text, OUT latest text)
LANGUAGE plpgsql AS $$
DECLARE
  r incidents%ROWTYPE;
  found_row boolean;
  ended bigint;
  decision text;
  reason text;
BEGIN
  PERFORM pg_advisory_xact_lock(hashtextextended(p_lock, 0));
  SELECT * INTO r FROM incidents i WHERE i.tenant = p_tenant AND i.key = p_key;
  found_row := FOUND;

  IF p_episode_started_at IS NOT NULL THEN
    SELECT s.ended_at INTO ended FROM resolutions s WHERE s.tenant = p_tenant AND s.key = p_key AND s.expires_at > p_now;
    IF ended IS NOT NULL AND ended >= p_episode_started_at THEN
      outcome := 'stale';
      IF found_row AND r.expires_at > p_now THEN
        fingerprint := r.fingerprint; created_at := r.created_at; last_seen_at := r.last_seen_at;
        refires := r.refires; updates := r.updates; expires_at := r.expires_at; route := r.route;
        identity := r.identity; latest := r.latest;
      ELSE
        fingerprint := p_fingerprint; created_at := p_now; last_seen_at := p_now; refires := 0; updates := 0; expires_at := p_now;
      END IF;
      IF p_race_ms IS NOT NULL THEN
        INSERT INTO audit (at, tenant, kind, key, decision, reason, replica, request_id)
        VALUES (p_now, p_tenant, 'incidents', p_key, 'SUPPRESS', 'stale', p_replica, p_request_id);
      END IF;
      RETURN;
    END IF;
  END IF;

  -- a record expired longer than the grace ago is as good as absent
  IF found_row AND r.expires_at + p_grace_ms <= p_now THEN found_row := false; END IF;

  IF NOT found_row OR r.expires_at <= p_now THEN
    outcome := 'created';
    expired_updates := CASE WHEN found_row THEN r.updates END;
    fingerprint := p_fingerprint; created_at := p_now; last_seen_at := p_now; refires := 0; updates := 0;
    -- a create takes the route the engine found, and the identity it received; every later change keeps them
    route := p_route; identity := p_identity;
  ELSE
    outcome := CASE WHEN r.fingerprint <> p_fingerprint THEN 'changed' ELSE 'unchanged' END;
    previous_fingerprint := r.fingerprint;
    fingerprint := p_fingerprint; created_at := r.created_at; last_seen_at := p_now;
    refires := r.refires + 1; updates := r.updates + CASE WHEN outcome = 'changed' THEN 1 ELSE 0 END;
    route := r.route; identity := r.identity;
  END IF;
  latest := COALESCE(p_latest, CASE WHEN outcome = 'created' THEN NULL ELSE r.latest END);
  expires_at := p_now + p_ttl_ms;

  INSERT INTO incidents AS i (tenant, key, fingerprint, created_at, last_seen_at, refires, updates, expires_at, route, identity, latest)
  VALUES (p_tenant, p_key, fingerprint, created_at, last_seen_at, refires, updates, expires_at, route, identity, latest)
  ON CONFLICT (tenant, key) DO UPDATE SET fingerprint = excluded.fingerprint, created_at = excluded.created_at,
    last_seen_at = excluded.last_seen_at, refires = excluded.refires, updates = excluded.updates, expires_at = excluded.expires_at,
    route = excluded.route, identity = excluded.identity, latest = excluded.latest;

  IF outcome <> 'created' THEN PERFORM oo_requeue_failing('incident', p_tenant, p_key, p_now); END IF;

  IF p_severity IS NOT NULL AND outcome <> 'unchanged' THEN
    INSERT INTO outbox (tenant, kind, action, key, severity, summary, data, at, route)
    VALUES (p_tenant, 'incident', CASE WHEN outcome = 'created' THEN 'create' ELSE 'update' END, p_key, p_severity, p_summary, p_data, p_now, route);
  END IF;

  IF p_race_ms IS NOT NULL THEN
    IF outcome = 'created' THEN
      decision := 'CREATE'; reason := CASE WHEN expired_updates IS NULL THEN 'new' ELSE 'expired' END;
    ELSIF outcome = 'unchanged' THEN
      decision := 'SUPPRESS'; reason := CASE WHEN p_now - created_at <= p_race_ms THEN 'lost_race' ELSE 'unchanged' END;
    ELSE
      -- a fingerprint is SEVERITY|cleared (0 or 1)
      decision := 'UPDATE';
      reason := CASE
        WHEN split_part(previous_fingerprint, '|', 2) = '0' AND split_part(p_fingerprint, '|', 2) = '1' THEN 'cleared'
        WHEN split_part(previous_fingerprint, '|', 2) = '1' AND split_part(p_fingerprint, '|', 2) = '0' THEN 'reopened'
        ELSE 'severity' END;
    END IF;
    INSERT INTO audit (at, tenant, kind, key, decision, reason, replica, request_id)
    VALUES (p_now, p_tenant, 'incidents', p_key, decision, reason, p_replica, p_request_id);
  END IF;
END $$;

-- A violation window's claim (migration 006), its entry carrying its route.
CREATE FUNCTION oo_claim_window(
  p_lock text, p_tenant text, p_key text, p_ttl_ms bigint, p_now bigint,
  p_severity text, p_summary text, p_data text, p_audit boolean, p_replica text, p_request_id text, p_route text DEFAULT NULL) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
  n integer;
  claim text;
BEGIN
  PERFORM pg_advisory_xact_lock(hashtextextended(p_lock, 0));
  INSERT INTO windows AS w (tenant, key, expires_at) VALUES (p_tenant, p_key, p_now + p_ttl_ms)
  ON CONFLICT (tenant, key) DO UPDATE SET expires_at = excluded.expires_at WHERE w.expires_at <= p_now;
  GET DIAGNOSTICS n = ROW_COUNT;
  IF n = 1 THEN
    claim := 'claimed';
    IF p_severity IS NOT NULL THEN
      INSERT INTO outbox (tenant, kind, action, key, severity, summary, data, at, route)
      VALUES (p_tenant, 'violation', 'create', p_key, p_severity, p_summary, p_data, p_now, p_route);
    END IF;
  ELSIF oo_requeue_failing('violation', p_tenant, p_key, p_now) > 0 THEN
    claim := 'requeued';
  ELSE
    claim := 'repeat';
  END IF;
  IF p_audit THEN
    INSERT INTO audit (at, tenant, kind, key, decision, reason, replica, request_id)
    VALUES (p_now, p_tenant, 'violations', p_key, CASE WHEN claim = 'repeat' THEN 'SUPPRESS' ELSE 'CREATE' END, claim, p_replica, p_request_id);
  END IF;
  RETURN claim;
END $$;

-- Close (migration 006): the close entry goes where the create went.
CREATE OR REPLACE FUNCTION oo_close_incident(
  p_lock text, p_tenant text, p_key text, p_resolved_at bigint, p_resolution_ms bigint, p_now bigint,
  p_audit boolean, p_replica text, p_request_id text,
  OUT fingerprint text, OUT created_at bigint, OUT last_seen_at bigint, OUT refires integer, OUT updates integer, OUT expires_at bigint)
LANGUAGE plpgsql AS $$
DECLARE
  r incidents%ROWTYPE;
  live boolean;
BEGIN
  PERFORM pg_advisory_xact_lock(hashtextextended(p_lock, 0));
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
  END IF;
  IF p_audit THEN
    INSERT INTO audit (at, tenant, kind, key, decision, reason, replica, request_id)
    VALUES (p_now, p_tenant, 'incidents', p_key, CASE WHEN live THEN 'CLOSE' ELSE 'NONE' END, CASE WHEN live THEN 'closed' ELSE 'not_live' END, p_replica, p_request_id);
  END IF;
END $$;

-- Acknowledge (migration 006): the update entry goes where the create went.
CREATE OR REPLACE FUNCTION oo_acknowledge_incident(p_lock text, p_tenant text, p_key text, p_now bigint, p_audit boolean, p_replica text, p_request_id text)
RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  r incidents%ROWTYPE;
  n integer;
BEGIN
  PERFORM pg_advisory_xact_lock(hashtextextended(p_lock, 0));
  SELECT * INTO r FROM incidents i WHERE i.tenant = p_tenant AND i.key = p_key;
  IF NOT FOUND OR r.expires_at <= p_now THEN RETURN 'absent'; END IF;
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

-- Journal replay (migration 006): a claim takes the journaled route.
CREATE FUNCTION oo_reconcile_incident(
  p_lock text, p_tenant text, p_key text, p_fingerprint text, p_refires integer, p_updates integer,
  p_ttl_ms bigint, p_journal_id text, p_marker_ms bigint, p_now bigint, p_audit boolean, p_replica text,
  p_route text DEFAULT NULL, p_identity text DEFAULT NULL, p_latest text DEFAULT NULL)
RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  r incidents%ROWTYPE;
  live boolean;
  outcome text;
BEGIN
  PERFORM pg_advisory_xact_lock(hashtextextended(p_lock, 0));
  PERFORM 1 FROM reconciled m WHERE m.tenant = p_tenant AND m.key = p_key AND m.journal_id = p_journal_id;
  IF FOUND THEN RETURN 'done'; END IF;
  SELECT * INTO r FROM incidents i WHERE i.tenant = p_tenant AND i.key = p_key;
  live := FOUND AND r.expires_at > p_now;
  outcome := CASE WHEN live THEN 'merged' ELSE 'claimed' END;
  INSERT INTO incidents AS i (tenant, key, fingerprint, created_at, last_seen_at, refires, updates, expires_at, route, identity, latest)
  VALUES (p_tenant, p_key, p_fingerprint,
    CASE WHEN live THEN r.created_at ELSE p_now END, p_now,
    CASE WHEN live THEN r.refires + p_refires + 1 ELSE p_refires END,
    CASE WHEN live THEN r.updates + p_updates + CASE WHEN r.fingerprint <> p_fingerprint THEN 1 ELSE 0 END ELSE p_updates END,
    p_now + p_ttl_ms,
    -- a key another replica created meanwhile keeps that create's route and identity; the journal's
    -- arrivals are the latest this replica saw (reconciledRecord)
    CASE WHEN live THEN r.route ELSE p_route END,
    CASE WHEN live THEN r.identity ELSE p_identity END,
    COALESCE(p_latest, CASE WHEN live THEN r.latest END))
  ON CONFLICT (tenant, key) DO UPDATE SET fingerprint = excluded.fingerprint, created_at = excluded.created_at,
    last_seen_at = excluded.last_seen_at, refires = excluded.refires, updates = excluded.updates, expires_at = excluded.expires_at,
    route = excluded.route, identity = excluded.identity, latest = excluded.latest;
  INSERT INTO reconciled (tenant, key, journal_id, outcome, expires_at) VALUES (p_tenant, p_key, p_journal_id, outcome, p_now + p_marker_ms);
  IF p_audit THEN
    INSERT INTO audit (at, tenant, kind, key, decision, reason, replica, request_id)
    VALUES (p_now, p_tenant, 'incidents', p_key, CASE WHEN live THEN 'SUPPRESS' ELSE 'CREATE' END, 'replayed_' || outcome, p_replica, 'none');
  END IF;
  RETURN outcome;
END $$;

-- A device event (migration 006), its notify entry carrying its route.
CREATE FUNCTION oo_apply_event(
  p_lock text, p_tenant text, p_device text, p_boot text, p_sequence bigint, p_state text, p_observed_at bigint,
  p_observed_iso text, p_retention_ms bigint, p_now bigint, p_audit boolean, p_replica text, p_request_id text,
  p_route text DEFAULT NULL,
  OUT outcome text, OUT reason text, OUT gap_from bigint, OUT gap_to bigint, OUT from_state text)
LANGUAGE plpgsql AS $$
DECLARE
  d devices%ROWTYPE;
  has_device boolean;
  boot_seen boolean;
BEGIN
  PERFORM pg_advisory_xact_lock(hashtextextended(p_lock, 0));
  PERFORM 1 FROM events_seen s
   WHERE s.tenant = p_tenant AND s.device = p_device AND s.boot = p_boot AND s.sequence = p_sequence AND s.expires_at > p_now;
  IF FOUND THEN
    outcome := 'duplicate';
  ELSE
    SELECT * INTO d FROM devices v WHERE v.tenant = p_tenant AND v.device = p_device;
    has_device := FOUND;
    outcome := 'applied';
    IF has_device AND d.boot = p_boot THEN
      IF p_sequence <= d.sequence THEN
        outcome := 'rejected'; reason := 'stale_sequence';
      ELSIF p_sequence > d.sequence + 1 THEN
        gap_from := d.sequence + 1; gap_to := p_sequence - 1;
      END IF;
    ELSIF has_device THEN
      PERFORM 1 FROM device_boots b WHERE b.tenant = p_tenant AND b.device = p_device AND b.boot = p_boot;
      IF FOUND THEN outcome := 'rejected'; reason := 'stale_boot'; END IF;
    END IF;
    IF outcome = 'applied' THEN
      IF has_device AND d.state <> p_state THEN from_state := d.state; END IF;
      INSERT INTO devices AS v (tenant, device, boot, sequence, state, observed_at, gaps)
      VALUES (p_tenant, p_device, p_boot, p_sequence, p_state, p_observed_at, COALESCE(gap_to - gap_from + 1, 0))
      ON CONFLICT (tenant, device) DO UPDATE SET boot = excluded.boot, sequence = excluded.sequence, state = excluded.state,
        observed_at = excluded.observed_at, gaps = v.gaps + excluded.gaps;
      INSERT INTO device_boots (tenant, device, boot) VALUES (p_tenant, p_device, p_boot) ON CONFLICT DO NOTHING;
      INSERT INTO events_seen AS s (tenant, device, boot, sequence, expires_at) VALUES (p_tenant, p_device, p_boot, p_sequence, p_now + p_retention_ms)
      ON CONFLICT (tenant, device, boot, sequence) DO UPDATE SET expires_at = excluded.expires_at;
      IF from_state IS NOT NULL THEN
        INSERT INTO outbox (tenant, kind, action, key, severity, summary, data, at, route)
        VALUES (p_tenant, 'event', 'notify', p_device, 'INFO', p_device || ': ' || from_state || ' → ' || p_state,
          json_build_object('device_id', p_device, 'boot_id', p_boot, 'sequence', p_sequence, 'from', from_state, 'to', p_state, 'observed_at', p_observed_iso)::text,
          p_now, p_route);
      END IF;
    END IF;
  END IF;
  IF p_audit THEN
    INSERT INTO audit (at, tenant, kind, key, decision, reason, replica, request_id)
    VALUES (p_now, p_tenant, 'events', p_device || '/' || p_boot || '/' || p_sequence, outcome, COALESCE(reason, ''), p_replica, p_request_id);
  END IF;
END $$;
