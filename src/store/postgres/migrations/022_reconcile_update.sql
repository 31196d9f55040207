-- 022: a replayed journal entry whose fingerprint differs from the live
-- record's is an UPDATE, and writes its outbox entry in the same step as
-- every UPDATE does (with the live key's route). Before, the merge recorded
-- the change and delivered nothing: the receiver kept the state from before
-- the outage while the store held the one after.
-- What the journal had not delivered for the key (p_owed: create, update or
-- NULL) is handed to the store, whose line carries it in order with the
-- store's own decisions. A claim writes a create when one is owed or the key
-- had creates before (the journal numbered its create 1, and the key's last
-- close may still be queued here, to reach the receiver after it); else an
-- update when one is owed.
-- The old signature is dropped, not overloaded: a replica of the previous
-- release calls it with fifteen arguments, which the defaults still take.
DROP FUNCTION oo_reconcile_incident(text, text, text, text, integer, integer, bigint, text, bigint, bigint, boolean, text, text, text, text);

CREATE FUNCTION oo_reconcile_incident(
  p_lock text, p_tenant text, p_key text, p_fingerprint text, p_refires integer, p_updates integer,
  p_ttl_ms bigint, p_journal_id text, p_marker_ms bigint, p_now bigint, p_audit boolean, p_replica text,
  p_route text DEFAULT NULL, p_identity text DEFAULT NULL, p_latest text DEFAULT NULL,
  p_severity text DEFAULT NULL, p_summary text DEFAULT NULL, p_data text DEFAULT NULL, p_owed text DEFAULT NULL)
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
  IF NOT live AND p_severity IS NOT NULL AND (p_owed IS NOT NULL OR EXISTS (
      SELECT 1 FROM delivery_counters c WHERE c.kind = 'incident' AND c.tenant = p_tenant AND c.key = p_key AND c.action = 'create')) THEN
    INSERT INTO outbox (tenant, kind, action, key, severity, summary, data, at, route)
    VALUES (p_tenant, 'incident',
      CASE WHEN p_owed = 'create' OR EXISTS (SELECT 1 FROM delivery_counters c
        WHERE c.kind = 'incident' AND c.tenant = p_tenant AND c.key = p_key AND c.action = 'create') THEN 'create' ELSE 'update' END,
      p_key, p_severity, p_summary, p_data, p_now, p_route);
  END IF;
  IF live AND r.fingerprint <> p_fingerprint AND p_severity IS NOT NULL THEN
    INSERT INTO outbox (tenant, kind, action, key, severity, summary, data, at, route)
    VALUES (p_tenant, 'incident', 'update', p_key, p_severity, p_summary, p_data, p_now, r.route);
  END IF;
  INSERT INTO reconciled (tenant, key, journal_id, outcome, expires_at) VALUES (p_tenant, p_key, p_journal_id, outcome, p_now + p_marker_ms);
  IF p_audit THEN
    INSERT INTO audit (at, tenant, kind, key, decision, reason, replica, request_id)
    VALUES (p_now, p_tenant, 'incidents', p_key, CASE WHEN live THEN 'SUPPRESS' ELSE 'CREATE' END, 'replayed_' || outcome, p_replica, 'none');
  END IF;
  RETURN outcome;
END $$;
