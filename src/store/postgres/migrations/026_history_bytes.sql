-- 026: the bytes each tenant's kept history events hold (their bodies,
-- UTF-8), so an append can refuse an event past
-- history.max_bytes_per_tenant. history_append keeps it (and answers how
-- many events it did not keep), history_sweep gives back what it deletes.
-- Each call reads a tenant's bytes once and adds what it changed at the end,
-- the tenants in name order after every key's lock: the count stays exact
-- under concurrent replicas (each adds its own change), and only the bound
-- can be passed by the batches in flight at once.
-- history_append's old signature is dropped; the bound is a new last
-- parameter with a default, so a replica of the previous release still
-- calls it with three arguments (and ignores the answer).
CREATE TABLE history_bytes (tenant text PRIMARY KEY, bytes bigint NOT NULL);
INSERT INTO history_bytes (tenant, bytes) SELECT tenant, sum(octet_length(body)) FROM history GROUP BY tenant;

DROP FUNCTION history_append(jsonb, integer, bigint);

CREATE FUNCTION history_append(p_entries jsonb, p_max integer, p_keep bigint, p_max_bytes bigint DEFAULT NULL) RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
  e jsonb;
  l record;
  t text;
  base jsonb := '{}'::jsonb;
  cur jsonb := '{}'::jsonb;
  b bigint;
  freed bigint;
  over integer := 0;
BEGIN
  FOR e IN
    SELECT x.v FROM jsonb_array_elements(p_entries) WITH ORDINALITY AS x(v, n)
    ORDER BY hashtextextended('history/' || (x.v->>'tenant') || '/' || (x.v->>'key'), 0), x.n
  LOOP
    t := e->>'tenant';
    IF NOT (base ? t) THEN
      b := COALESCE((SELECT h.bytes FROM history_bytes h WHERE h.tenant = t), 0);
      base := base || jsonb_build_object(t, b);
      cur := cur || jsonb_build_object(t, b);
    END IF;
    PERFORM pg_advisory_xact_lock(hashtextextended('history/' || t || '/' || (e->>'key'), 0));
    SELECT h.id, h.fold, h.seq INTO l FROM history h WHERE h.tenant = t AND h.key = e->>'key' ORDER BY h.id DESC LIMIT 1;
    IF l.id IS NOT NULL AND e->>'fold' IS NOT NULL AND l.fold = e->>'fold' THEN
      UPDATE history SET count = count + (e->>'count')::bigint,
        gap = GREATEST(gap, (e->>'gap')::bigint, (e->>'first_at')::bigint - last_at),
        last_at = (e->>'last_at')::bigint, expires_at = (e->>'last_at')::bigint + p_keep
      WHERE id = l.id;
    ELSE
      b := octet_length(e->>'body');
      IF p_max_bytes IS NOT NULL AND (cur->>t)::bigint + b > p_max_bytes THEN
        over := over + 1;
        CONTINUE;
      END IF;
      INSERT INTO history (tenant, key, at, last_at, fold, count, gap, seq, body, expires_at)
      VALUES (t, e->>'key', (e->>'first_at')::bigint, (e->>'last_at')::bigint, e->>'fold',
        (e->>'count')::bigint, (e->>'gap')::bigint, COALESCE(l.seq, 0) + 1, e->>'body', (e->>'last_at')::bigint + p_keep);
      freed := 0;
      IF l.id IS NOT NULL THEN
        -- Beyond the newest p_max; and among the oldest few, those past their time as of this append
        -- (the rest go with the sweep, and no read answers them).
        IF l.seq + 1 > p_max THEN
          WITH d AS (DELETE FROM history WHERE tenant = t AND key = e->>'key' AND seq <= l.seq + 1 - p_max RETURNING octet_length(body) AS n)
          SELECT freed + COALESCE(sum(d.n), 0) INTO freed FROM d;
        END IF;
        WITH d AS (DELETE FROM history WHERE id IN (
          SELECT h.id FROM history h WHERE h.tenant = t AND h.key = e->>'key' ORDER BY h.id LIMIT 8
        ) AND expires_at <= (e->>'last_at')::bigint RETURNING octet_length(body) AS n)
        SELECT freed + COALESCE(sum(d.n), 0) INTO freed FROM d;
      END IF;
      cur := jsonb_set(cur, ARRAY[t], to_jsonb((cur->>t)::bigint + b - freed));
    END IF;
  END LOOP;
  FOR t IN SELECT k FROM jsonb_object_keys(cur) AS k ORDER BY k LOOP
    b := (cur->>t)::bigint - (base->>t)::bigint;
    IF b <> 0 THEN
      INSERT INTO history_bytes AS h (tenant, bytes) VALUES (t, GREATEST(b, 0))
      ON CONFLICT (tenant) DO UPDATE SET bytes = GREATEST(h.bytes + b, 0);
    END IF;
  END LOOP;
  RETURN over;
END;
$$;

-- The sweep: at most p_batch events past their time, and their bytes given back, tenants in name order.
CREATE FUNCTION history_sweep(p_now bigint, p_batch integer) RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
  g record;
  n integer := 0;
BEGIN
  FOR g IN
    WITH d AS (DELETE FROM history WHERE id IN (SELECT id FROM history WHERE expires_at <= p_now LIMIT p_batch) RETURNING tenant, octet_length(body) AS b)
    SELECT d.tenant, sum(d.b)::bigint AS b, count(*)::integer AS c FROM d GROUP BY d.tenant ORDER BY d.tenant
  LOOP
    UPDATE history_bytes SET bytes = GREATEST(bytes - g.b, 0) WHERE tenant = g.tenant;
    n := n + g.c;
  END LOOP;
  RETURN n;
END;
$$;
