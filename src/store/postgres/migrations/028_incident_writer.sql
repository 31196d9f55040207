-- Who wrote a key's last arrival: a claim names its writer (a fail-open
-- journal's id; NULL: nobody's), kept with the record. A journal's replay
-- keeps the store's state as the newer only when another writer saw the key
-- after the journal's latest arrival: what the journal wrote itself (an
-- earlier entry of the key, replayed) is never newer than its own arrivals.
-- A replay records the journal's latest arrival as the key's last, not the
-- replay's own time, so another replica's journal replayed after it compares
-- its arrivals with when this one's were.
-- An edit of a named alert (Opsgenie's priority, message and description
-- updates) names the episode it amends, as read: decided on it only. And
-- a claim may show its arrival on a create or an update only: a repeat of
-- an Opsgenie alert leaves its message as its receivers last heard it.
-- Both functions take the new arguments last, defaulting to NULL, so a
-- replica of the version before still calls them as it did; they are
-- dropped and made again, since an argument added to a function is another
-- function to Postgres.

ALTER TABLE incidents ADD COLUMN writer text;

DROP FUNCTION oo_decide_incident(text, text, text, text, bigint, bigint, bigint, bigint, text, text, text, bigint, text, text, text, text, text);
DROP FUNCTION oo_reconcile_incident(text, text, text, text, integer, integer, bigint, text, bigint, bigint, boolean, text, text, text, text, text, text, text, text, bigint);

-- Claim-or-compare (017), keeping the claim's writer, and deciding an edit
-- (`p_amends`, the episode it changes, and `p_amends_refires`, its arrivals as
-- the edit read them) on that live episode as read only: another, none, or an
-- arrival since, is stale; on it, a change even at the same fingerprint.
CREATE FUNCTION oo_decide_incident(
  p_lock text, p_tenant text, p_key text, p_fingerprint text, p_ttl_ms bigint, p_grace_ms bigint, p_now bigint,
  p_episode_started_at bigint, p_severity text, p_summary text, p_data text,
  p_race_ms bigint, p_replica text, p_request_id text,
  p_route text DEFAULT NULL, p_identity text DEFAULT NULL, p_latest text DEFAULT NULL, p_writer text DEFAULT NULL,
  p_amends bigint DEFAULT NULL, p_amends_refires integer DEFAULT NULL, p_shows_on_change boolean DEFAULT NULL,
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
  END IF;
  -- An alert's episode already resolved, or an edit of a record other than the live one as it read it
  -- (another episode, none, or an arrival since): nothing changes.
  IF (ended IS NOT NULL AND ended >= p_episode_started_at)
      OR (p_amends IS NOT NULL AND NOT (found_row AND r.expires_at > p_now AND r.created_at = p_amends AND r.refires = p_amends_refires)) THEN
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

  -- a record expired longer than the grace ago is as good as absent
  IF found_row AND r.expires_at + p_grace_ms <= p_now THEN found_row := false; END IF;

  IF NOT found_row OR r.expires_at <= p_now THEN
    outcome := 'created';
    expired_updates := CASE WHEN found_row THEN r.updates END;
    fingerprint := p_fingerprint; created_at := p_now; last_seen_at := p_now; refires := 0; updates := 0;
    -- a create takes the route the engine found, and the identity it received; every later change keeps them
    route := p_route; identity := p_identity;
  ELSE
    -- an edit of the live episode is a change even at the same fingerprint: what the alert says changed
    outcome := CASE WHEN r.fingerprint <> p_fingerprint OR p_amends IS NOT NULL THEN 'changed' ELSE 'unchanged' END;
    previous_fingerprint := r.fingerprint;
    fingerprint := p_fingerprint; created_at := r.created_at; last_seen_at := p_now;
    refires := r.refires + 1; updates := r.updates + CASE WHEN outcome = 'changed' THEN 1 ELSE 0 END;
    route := r.route; identity := r.identity;
  END IF;
  -- a repeat of a claim that shows on a change only leaves the latest as the receivers last heard it
  latest := CASE WHEN p_shows_on_change AND outcome = 'unchanged' THEN r.latest
    ELSE COALESCE(p_latest, CASE WHEN outcome = 'created' THEN NULL ELSE r.latest END) END;
  expires_at := p_now + p_ttl_ms;

  INSERT INTO incidents AS i (tenant, key, fingerprint, created_at, last_seen_at, refires, updates, expires_at, route, identity, latest, writer)
  VALUES (p_tenant, p_key, fingerprint, created_at, last_seen_at, refires, updates, expires_at, route, identity, latest, p_writer)
  ON CONFLICT (tenant, key) DO UPDATE SET fingerprint = excluded.fingerprint, created_at = excluded.created_at,
    last_seen_at = excluded.last_seen_at, refires = excluded.refires, updates = excluded.updates, expires_at = excluded.expires_at,
    route = excluded.route, identity = excluded.identity, latest = excluded.latest, writer = excluded.writer;

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
        WHEN previous_fingerprint = p_fingerprint THEN 'amended'
        WHEN split_part(previous_fingerprint, '|', 2) = '0' AND split_part(p_fingerprint, '|', 2) = '1' THEN 'cleared'
        WHEN split_part(previous_fingerprint, '|', 2) = '1' AND split_part(p_fingerprint, '|', 2) = '0' THEN 'reopened'
        ELSE 'severity' END;
    END IF;
    INSERT INTO audit (at, tenant, kind, key, decision, reason, replica, request_id)
    VALUES (p_now, p_tenant, 'incidents', p_key, decision, reason, p_replica, p_request_id);
  END IF;
END $$;

-- The replay (027), keeping the journal as the writer unless another writer's newer state stays,
-- and the journal's arrival as the key's last (`p_created_ms_ago`: when the entry began, an age).
CREATE FUNCTION oo_reconcile_incident(
  p_lock text, p_tenant text, p_key text, p_fingerprint text, p_refires integer, p_updates integer,
  p_ttl_ms bigint, p_journal_id text, p_marker_ms bigint, p_now bigint, p_audit boolean, p_replica text,
  p_route text DEFAULT NULL, p_identity text DEFAULT NULL, p_latest text DEFAULT NULL,
  p_severity text DEFAULT NULL, p_summary text DEFAULT NULL, p_data text DEFAULT NULL, p_owed text DEFAULT NULL,
  p_arrived_ms_ago bigint DEFAULT 0, p_writer text DEFAULT NULL, p_created_ms_ago bigint DEFAULT NULL)
RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  r incidents%ROWTYPE;
  live boolean;
  newer boolean;
  outcome text;
  arrived bigint := p_now - p_arrived_ms_ago;
BEGIN
  PERFORM pg_advisory_xact_lock(hashtextextended(p_lock, 0));
  PERFORM 1 FROM reconciled m WHERE m.tenant = p_tenant AND m.key = p_key AND m.journal_id = p_journal_id;
  IF FOUND THEN RETURN 'done'; END IF;
  PERFORM 1 FROM closes c WHERE c.tenant = p_tenant AND c.key = p_key AND c.expires_at > p_now AND c.closed_at > p_now - p_arrived_ms_ago;
  IF FOUND THEN
    INSERT INTO reconciled (tenant, key, journal_id, outcome, expires_at) VALUES (p_tenant, p_key, p_journal_id, 'closed', p_now + p_marker_ms);
    IF p_audit THEN
      INSERT INTO audit (at, tenant, kind, key, decision, reason, replica, request_id)
      VALUES (p_now, p_tenant, 'incidents', p_key, 'NONE', 'replayed_closed', p_replica, 'none');
    END IF;
    RETURN 'closed';
  END IF;
  SELECT * INTO r FROM incidents i WHERE i.tenant = p_tenant AND i.key = p_key;
  live := FOUND AND r.expires_at > p_now;
  -- Another writer saw the key after the journal's latest arrival (another replica decided it meanwhile,
  -- later): the store's state is the newer one, and stays. What this journal wrote itself (its
  -- replica's call the store ran late, an earlier entry of the key replayed) is never newer.
  newer := live AND r.last_seen_at > arrived AND r.writer IS DISTINCT FROM p_writer;
  outcome := CASE WHEN live THEN 'merged' ELSE 'claimed' END;
  INSERT INTO incidents AS i (tenant, key, fingerprint, created_at, last_seen_at, refires, updates, expires_at, route, identity, latest, writer)
  VALUES (p_tenant, p_key, CASE WHEN newer THEN r.fingerprint ELSE p_fingerprint END,
    -- the key's last arrival is the journal's (or the store's, when later), never this replay's own
    -- time, so another journal's replay compares its arrivals with it; a claim's episode began when
    -- the journal's did
    CASE WHEN live THEN r.created_at ELSE LEAST(p_now - COALESCE(p_created_ms_ago, p_arrived_ms_ago), arrived) END,
    CASE WHEN live THEN GREATEST(r.last_seen_at, arrived) ELSE arrived END,
    CASE WHEN live THEN r.refires + p_refires + 1 ELSE p_refires END,
    CASE WHEN live THEN r.updates + p_updates + CASE WHEN NOT newer AND r.fingerprint <> p_fingerprint THEN 1 ELSE 0 END ELSE p_updates END,
    p_now + p_ttl_ms,
    -- a key another replica created meanwhile keeps that create's route and identity; the journal's
    -- arrivals are the latest this replica saw, unless another writer's are newer
    CASE WHEN live THEN r.route ELSE p_route END,
    CASE WHEN live THEN r.identity ELSE p_identity END,
    CASE WHEN newer THEN r.latest ELSE COALESCE(p_latest, CASE WHEN live THEN r.latest END) END,
    CASE WHEN newer THEN r.writer ELSE p_writer END)
  ON CONFLICT (tenant, key) DO UPDATE SET fingerprint = excluded.fingerprint, created_at = excluded.created_at,
    last_seen_at = excluded.last_seen_at, refires = excluded.refires, updates = excluded.updates, expires_at = excluded.expires_at,
    route = excluded.route, identity = excluded.identity, latest = excluded.latest, writer = excluded.writer;
  IF NOT live AND p_severity IS NOT NULL AND (p_owed IS NOT NULL OR EXISTS (
      SELECT 1 FROM delivery_counters c WHERE c.kind = 'incident' AND c.tenant = p_tenant AND c.key = p_key AND c.action = 'create')) THEN
    INSERT INTO outbox (tenant, kind, action, key, severity, summary, data, at, route)
    VALUES (p_tenant, 'incident',
      CASE WHEN p_owed = 'create' OR EXISTS (SELECT 1 FROM delivery_counters c
        WHERE c.kind = 'incident' AND c.tenant = p_tenant AND c.key = p_key AND c.action = 'create') THEN 'create' ELSE 'update' END,
      p_key, p_severity, p_summary, p_data, p_now, p_route);
  END IF;
  -- A merge the journal owes updates for writes one too, changed or not (the journal held them while
  -- the store was away; its provisional create may have reached the receiver after the store's newer state).
  IF live AND NOT newer AND (r.fingerprint <> p_fingerprint OR p_owed IS NOT NULL) AND p_severity IS NOT NULL THEN
    INSERT INTO outbox (tenant, kind, action, key, severity, summary, data, at, route)
    VALUES (p_tenant, 'incident', 'update', p_key, p_severity, p_summary, p_data, p_now, r.route);
  END IF;
  -- The store's state is the newer, yet the journal's create (sent during the outage) may have reached the
  -- receiver after it: the store's state goes again, its severity and summary with the journal's data.
  IF newer AND p_severity IS NOT NULL THEN
    INSERT INTO outbox (tenant, kind, action, key, severity, summary, data, at, route)
    VALUES (p_tenant, 'incident', 'update', p_key, split_part(r.fingerprint, '|', 1),
      COALESCE(CASE WHEN r.latest IS NOT NULL THEN r.latest::jsonb ->> 'summary' END, p_summary), p_data, p_now, r.route);
  END IF;
  INSERT INTO reconciled (tenant, key, journal_id, outcome, expires_at) VALUES (p_tenant, p_key, p_journal_id, outcome, p_now + p_marker_ms);
  IF p_audit THEN
    INSERT INTO audit (at, tenant, kind, key, decision, reason, replica, request_id)
    VALUES (p_now, p_tenant, 'incidents', p_key, CASE WHEN live THEN 'SUPPRESS' ELSE 'CREATE' END, 'replayed_' || outcome, p_replica, 'none');
  END IF;
  RETURN outcome;
END $$;
