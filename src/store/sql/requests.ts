import { beginQuota, finishQuota, type KeptAnswer, type RequestBegin, type RequestQuota } from '../contract/index.js';

/**
 * Idempotency-Key statements as SQLite runs them (see named.ts), each inside
 * its operation's one transaction; Postgres runs begin, finish and abandon
 * as server-side functions with the same rules (migration 016) and shares
 * the quota and sweep statements. Every operation on a tenant's
 * records first takes its quota row (LOCK_QUOTA: on Postgres the upsert
 * locks the row until the transaction ends), so a tenant's begins, finishes,
 * abandons and sweeps are serialised against each other and its count and
 * bytes are exact; the one lock order, quota then records, cannot deadlock.
 */

/** The tenant's quota row, made if absent, locked, and read. */
export const LOCK_QUOTA = `
INSERT INTO request_quota (tenant, n_keys, n_bytes) VALUES (@tenant, 0, 0)
ON CONFLICT (tenant) DO UPDATE SET n_keys = request_quota.n_keys
RETURNING n_keys AS "keys", n_bytes AS "bytes"`;

export const ADD_QUOTA = `
UPDATE request_quota SET n_keys = n_keys + @keys, n_bytes = n_bytes + @bytes WHERE tenant = @tenant`;

/** The key's record, live or not. */
export const HELD_REQUEST = `
SELECT body_hash AS "bodyHash", status, content_type AS "contentType", body, size, expires_at AS "expiresAt"
FROM requests WHERE tenant = @tenant AND key = @key`;

/** Records the key (in flight, or answered), over an expired record that held it. */
export const PUT_REQUEST = `
INSERT INTO requests (tenant, key, body_hash, status, content_type, body, size, expires_at)
VALUES (@tenant, @key, @bodyHash, @status, @contentType, @body, @size, @until)
ON CONFLICT (tenant, key) DO UPDATE SET body_hash = excluded.body_hash, status = excluded.status,
  content_type = excluded.content_type, body = excluded.body, size = excluded.size, expires_at = excluded.expires_at`;

export const ABANDON_REQUEST = `
DELETE FROM requests WHERE tenant = @tenant AND key = @key AND body_hash = @bodyHash AND status IS NULL
RETURNING size`;

/** Tenants with expired records, the first of a sweep's batch. */
export const EXPIRED_TENANTS = `
SELECT DISTINCT tenant FROM (SELECT tenant FROM requests WHERE expires_at <= @now LIMIT @batch) AS due`;

/** One tenant's expired records, up to a batch, with what they cost. */
export const SWEEP_TENANT = `
DELETE FROM requests WHERE tenant = @tenant AND key IN
  (SELECT key FROM requests WHERE tenant = @tenant AND expires_at <= @now LIMIT @batch)
RETURNING size`;

export interface HeldRow {
  bodyHash: string;
  status: number | null;
  contentType: string | null;
  body: string | null;
  size: number | string;
  expiresAt: number | string;
}

export interface QuotaRow {
  keys: number | string;
  bytes: number | string;
}

/** What a live held row means to the caller of `begin`. */
export function heldAs(row: Pick<HeldRow, 'bodyHash' | 'status' | 'contentType' | 'body'>): RequestBegin {
  if (row.status === null) return { state: 'in_flight', bodyHash: row.bodyHash };
  return {
    state: 'done',
    bodyHash: row.bodyHash,
    answer: { status: Number(row.status), contentType: row.contentType ?? 'application/json', body: row.body ?? '' },
  };
}

/** The locked quota row and the key's record as the bound's rules read them. */
const quotaOf = (q: QuotaRow): RequestQuota => ({ keys: Number(q.keys), bytes: Number(q.bytes) });
const sizeOf = (row: HeldRow | undefined) => (row ? { size: Number(row.size) } : undefined);

/**
 * What `begin` does, read from the locked quota and the key's record: answer
 * a live record as it is; otherwise record the key in flight as the bound
 * allows (beginQuota), or refuse it.
 */
export function beginStep(q: QuotaRow, row: HeldRow | undefined, now: number, maxKeys: number): { answer: RequestBegin; delta?: RequestQuota } {
  if (row && Number(row.expiresAt) > now) return { answer: heldAs(row) };
  const delta = beginQuota(quotaOf(q), sizeOf(row), maxKeys);
  return delta ? { answer: { state: 'new' }, delta } : { answer: { state: 'full' } };
}

/** What `finish` keeps, read from the locked quota and the key's record (finishQuota). */
export const finishStep = (q: QuotaRow, row: HeldRow | undefined, answer: KeptAnswer, maxBytes: number) =>
  finishQuota(quotaOf(q), sizeOf(row), answer, maxBytes);

/** The statement values of a record in flight or answered. */
export function putValues(
  tenant: string,
  key: string,
  bodyHash: string,
  until: number,
  answer?: { status: number; contentType: string; body: string },
  size = 0,
) {
  return { tenant, key, bodyHash, until, status: answer?.status ?? null, contentType: answer?.contentType ?? null, body: answer?.body ?? null, size };
}
