-- 018: each key's history (GET /v1/incidents/{key}/history). A row is an
-- event: its body (JSON text, without its time), its time (`at`), and for a
-- folded run (`fold` set) the arrivals counted into it, the last one's time
-- and the longest gap between two; `seq` counts the key's events (its
-- first is 1), so an append trims only once a key holds more than the bound.
-- Kept until `expires_at`.
CREATE TABLE history (
  id bigserial PRIMARY KEY, tenant text NOT NULL, key text NOT NULL,
  at bigint NOT NULL, last_at bigint NOT NULL, fold text,
  count bigint NOT NULL DEFAULT 1, gap bigint NOT NULL DEFAULT 0, seq bigint NOT NULL,
  body text NOT NULL, expires_at bigint NOT NULL
);
CREATE INDEX history_key ON history (tenant, key, id);
CREATE INDEX history_expires_at ON history (expires_at);

-- Appends a batch of events (a JSON array of {tenant, key, at, fold, count,
-- first_at, last_at, gap, body}) in one round trip and one transaction. Each
-- key's append holds that key's advisory lock, so replicas folding into one
-- run never both append; the locks are taken in one order (by lock, then by
-- the batch's own order) so two batches never wait on each other in a cycle.
CREATE FUNCTION history_append(p_entries jsonb, p_max integer, p_keep bigint) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
  e jsonb;
  l record;
BEGIN
  FOR e IN
    SELECT x.v FROM jsonb_array_elements(p_entries) WITH ORDINALITY AS x(v, n)
    ORDER BY hashtextextended('history/' || (x.v->>'tenant') || '/' || (x.v->>'key'), 0), x.n
  LOOP
    PERFORM pg_advisory_xact_lock(hashtextextended('history/' || (e->>'tenant') || '/' || (e->>'key'), 0));
    SELECT h.id, h.fold, h.seq INTO l FROM history h WHERE h.tenant = e->>'tenant' AND h.key = e->>'key' ORDER BY h.id DESC LIMIT 1;
    IF l.id IS NOT NULL AND e->>'fold' IS NOT NULL AND l.fold = e->>'fold' THEN
      UPDATE history SET count = count + (e->>'count')::bigint,
        gap = GREATEST(gap, (e->>'gap')::bigint, (e->>'first_at')::bigint - last_at),
        last_at = (e->>'last_at')::bigint, expires_at = (e->>'last_at')::bigint + p_keep
      WHERE id = l.id;
    ELSE
      INSERT INTO history (tenant, key, at, last_at, fold, count, gap, seq, body, expires_at)
      VALUES (e->>'tenant', e->>'key', (e->>'first_at')::bigint, (e->>'last_at')::bigint, e->>'fold',
        (e->>'count')::bigint, (e->>'gap')::bigint, COALESCE(l.seq, 0) + 1, e->>'body', (e->>'last_at')::bigint + p_keep);
      IF l.id IS NOT NULL THEN
        -- Beyond the newest p_max; and among the oldest few, those past their time as of this append
        -- (the rest go with the sweep, and no read answers them).
        IF l.seq + 1 > p_max THEN
          DELETE FROM history WHERE tenant = e->>'tenant' AND key = e->>'key' AND seq <= l.seq + 1 - p_max;
        END IF;
        DELETE FROM history WHERE id IN (
          SELECT h.id FROM history h WHERE h.tenant = e->>'tenant' AND h.key = e->>'key' ORDER BY h.id LIMIT 8
        ) AND expires_at <= (e->>'last_at')::bigint;
      END IF;
    END IF;
  END LOOP;
END;
$$;
