import type { RequestBegin } from '../contract/index.js';

/**
 * Idempotency-Key statements both SQL backends run as written (see named.ts),
 * each inside its operation's one transaction.
 */

/** The key's record: changes 1 row exactly when no live record held it (this request runs). */
export const BEGIN_REQUEST = `
INSERT INTO requests (tenant, key, body_hash, status, content_type, body, expires_at)
VALUES (@tenant, @key, @bodyHash, NULL, NULL, NULL, @until)
ON CONFLICT (tenant, key) DO UPDATE SET body_hash = excluded.body_hash, status = NULL, content_type = NULL, body = NULL, expires_at = excluded.expires_at
WHERE requests.expires_at <= @now`;

/** The live record that kept BEGIN_REQUEST from running the request. */
export const HELD_REQUEST = `
SELECT body_hash AS "bodyHash", status, content_type AS "contentType", body FROM requests WHERE tenant = @tenant AND key = @key`;

export const FINISH_REQUEST = `
INSERT INTO requests (tenant, key, body_hash, status, content_type, body, expires_at)
VALUES (@tenant, @key, @bodyHash, @status, @contentType, @body, @until)
ON CONFLICT (tenant, key) DO UPDATE SET body_hash = excluded.body_hash, status = excluded.status,
  content_type = excluded.content_type, body = excluded.body, expires_at = excluded.expires_at`;

export const ABANDON_REQUEST = `
DELETE FROM requests WHERE tenant = @tenant AND key = @key AND body_hash = @bodyHash AND status IS NULL`;

export const SWEEP_REQUESTS = `
DELETE FROM requests WHERE (tenant, key) IN (SELECT tenant, key FROM requests WHERE expires_at <= @now LIMIT @batch)`;

export interface HeldRow {
  bodyHash: string;
  status: number | null;
  contentType: string | null;
  body: string | null;
}

/** What a held row means to the caller of `begin`. */
export function heldAs(row: HeldRow | undefined): RequestBegin {
  // Gone between the two statements (swept, or abandoned by its owner): say in flight, the retry comes back.
  if (!row) return { state: 'in_flight', bodyHash: '' };
  if (row.status === null) return { state: 'in_flight', bodyHash: row.bodyHash };
  return {
    state: 'done',
    bodyHash: row.bodyHash,
    answer: { status: Number(row.status), contentType: row.contentType ?? 'application/json', body: row.body ?? '' },
  };
}
