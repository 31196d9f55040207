-- A journal's replay merged into a live key writes an update when the journal
-- owes anything for it (held updates, or a create), not only when the
-- fingerprint differs: a replica failing open holds its journal's updates
-- for the store (their numbers would repeat the store's), and its
-- provisional create may have reached the receiver after the store's state,
-- or be in flight as the replay drops it. Unless the store saw the key after
-- the journal's latest arrival (another replica decided it meanwhile,
-- later): then the store's fingerprint and latest arrival stay, and the
-- store's state goes out again (its severity and summary, the journal's
-- data: the store keeps no payload), since the journal's create, sent during
-- the outage, may have reached the receiver after it. The function is 024's
-- otherwise.
CREATE OR REPLACE FUNCTION oo_reconcile_incident(
  p_lock text, p_tenant text, p_key text, p_fingerprint text, p_refires integer, p_updates integer,
  p_ttl_ms bigint, p_journal_id text, p_marker_ms bigint, p_now bigint, p_audit boolean, p_replica text,
  p_route text DEFAULT NULL, p_identity text DEFAULT NULL, p_latest text DEFAULT NULL,
  p_severity text DEFAULT NULL, p_summary text DEFAULT NULL, p_data text DEFAULT NULL, p_owed text DEFAULT NULL,
  p_arrived_ms_ago bigint DEFAULT 0)
RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  r incidents%ROWTYPE;
  live boolean;
  newer boolean;
  outcome text;
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
  -- The store saw the key after the journal's latest arrival (another replica decided it meanwhile,
  -- later): the store's state is the newer one, and stays.
  newer := live AND r.last_seen_at > p_now - p_arrived_ms_ago;
  outcome := CASE WHEN live THEN 'merged' ELSE 'claimed' END;
  INSERT INTO incidents AS i (tenant, key, fingerprint, created_at, last_seen_at, refires, updates, expires_at, route, identity, latest)
  VALUES (p_tenant, p_key, CASE WHEN newer THEN r.fingerprint ELSE p_fingerprint END,
    CASE WHEN live THEN r.created_at ELSE p_now END, p_now,
    CASE WHEN live THEN r.refires + p_refires + 1 ELSE p_refires END,
    CASE WHEN live THEN r.updates + p_updates + CASE WHEN NOT newer AND r.fingerprint <> p_fingerprint THEN 1 ELSE 0 END ELSE p_updates END,
    p_now + p_ttl_ms,
    -- a key another replica created meanwhile keeps that create's route and identity; the journal's
    -- arrivals are the latest this replica saw (reconciledRecord)
    CASE WHEN live THEN r.route ELSE p_route END,
    CASE WHEN live THEN r.identity ELSE p_identity END,
    CASE WHEN newer THEN r.latest ELSE COALESCE(p_latest, CASE WHEN live THEN r.latest END) END)
  ON CONFLICT (tenant, key) DO UPDATE SET fingerprint = excluded.fingerprint, created_at = excluded.created_at,
    last_seen_at = excluded.last_seen_at, refires = excluded.refires, updates = excluded.updates, expires_at = excluded.expires_at,
    route = excluded.route, identity = excluded.identity, latest = excluded.latest;
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
