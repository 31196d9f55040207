-- The escalation step last written for each key's episode (its created_at),
-- and the step itself as one function: under the key's advisory lock, as an
-- acknowledgement and a close are, so no step is written after either and
-- none twice.
CREATE TABLE IF NOT EXISTS escalations (
  tenant text NOT NULL, key text NOT NULL, created_at bigint NOT NULL, step integer NOT NULL,
  PRIMARY KEY (tenant, key)
);

CREATE FUNCTION oo_escalate_incident(p_lock text, p_tenant text, p_key text, p_now bigint, p_episode bigint, p_step integer,
  p_due_at bigint, p_to text, p_severity text, p_summary text, p_data text)
RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  r incidents%ROWTYPE;
  e escalations%ROWTYPE;
  joined text;
BEGIN
  PERFORM pg_advisory_xact_lock(hashtextextended(p_lock, 0));
  SELECT * INTO r FROM incidents i WHERE i.tenant = p_tenant AND i.key = p_key;
  IF NOT FOUND OR r.expires_at <= p_now OR r.created_at <> p_episode THEN RETURN 'absent'; END IF;
  IF EXISTS (SELECT 1 FROM acks a WHERE a.tenant = p_tenant AND a.key = p_key AND a.created_at = r.created_at) THEN RETURN 'acknowledged'; END IF;
  SELECT * INTO e FROM escalations x WHERE x.tenant = p_tenant AND x.key = p_key;
  IF FOUND AND e.created_at = p_episode AND e.step >= p_step THEN RETURN 'done'; END IF;
  IF p_now < p_due_at THEN RETURN 'early'; END IF;
  INSERT INTO escalations AS x (tenant, key, created_at, step) VALUES (p_tenant, p_key, p_episode, p_step)
  ON CONFLICT (tenant, key) DO UPDATE SET created_at = excluded.created_at, step = excluded.step;
  -- The step's adapters join the key's route (none: every adapter has it already), each once, in order.
  IF r.route IS NOT NULL THEN
    SELECT string_agg(a, ',' ORDER BY o) INTO joined FROM (
      SELECT a, min(o) AS o FROM unnest(string_to_array(r.route || ',' || p_to, ',')) WITH ORDINALITY AS t(a, o) GROUP BY a) u;
    UPDATE incidents i SET route = joined WHERE i.tenant = p_tenant AND i.key = p_key;
  END IF;
  INSERT INTO outbox (tenant, kind, action, key, severity, summary, data, at, route)
  VALUES (p_tenant, 'incident', 'create', p_key, p_severity, p_summary, p_data, p_now, p_to);
  RETURN 'escalated';
END $$;
