import type { Matcher } from '../../core/matcher.js';
import type { Silence } from '../contract/index.js';

/**
 * Silence statements both SQL backends run as written (see named.ts), each
 * inside its operation's one transaction. Every write first bumps the one
 * row of `silence_version`: replicas watch that number, and on Postgres its
 * row lock also orders concurrent writes, so a tenant's open-silence count
 * cannot be passed by two creates at once. The row it writes takes that new
 * version (`v`), so a replica reads only the silences written since its load.
 */

export const BUMP_VERSION = `UPDATE silence_version SET v = v + 1`;
export const VERSION = `SELECT v FROM silence_version`;

/** Inserts exactly when the tenant has fewer than @maxOpen silences that end after @now. */
export const CREATE_SILENCE = `
INSERT INTO silences (tenant, id, matchers, starts_at, ends_at, created_by, comment, updated_at, v)
SELECT @tenant, @id, @matchers, @startsAt, @endsAt, @createdBy, @comment, @updatedAt, (SELECT v FROM silence_version)
 WHERE (SELECT count(*) FROM silences WHERE tenant = @tenant AND ends_at > @now) < @maxOpen`;

/** The tenant's ended silences beyond the newest-ended @keep (at most @batch of them), deleted. */
export const TRIM_ENDED_SILENCES = `
DELETE FROM silences WHERE (tenant, id) IN (
  SELECT tenant, id FROM silences WHERE tenant = @tenant AND ends_at <= @now ORDER BY ends_at DESC, id LIMIT @batch OFFSET @keep)`;

export const UPDATE_SILENCE = `
UPDATE silences SET matchers = @matchers, starts_at = @startsAt, ends_at = @endsAt, created_by = @createdBy, comment = @comment, updated_at = @updatedAt,
  v = (SELECT v FROM silence_version)
 WHERE tenant = @tenant AND id = @id AND ends_at > @now`;

export const EXPIRE_SILENCE = `
UPDATE silences SET starts_at = CASE WHEN starts_at < @now THEN starts_at ELSE @now END, ends_at = @now, updated_at = @now,
  v = (SELECT v FROM silence_version)
 WHERE tenant = @tenant AND id = @id AND ends_at > @now`;

/** A silence's columns as SilenceRow names them, of the table or of its alias `t.`. */
const columns = (t = '') =>
  `${t}tenant, ${t}id, ${t}matchers, ${t}starts_at AS "startsAt", ${t}ends_at AS "endsAt", ${t}created_by AS "createdBy", ${t}comment, ${t}updated_at AS "updatedAt"`;
const COLUMNS = columns();

export const GET_SILENCE = `SELECT ${COLUMNS} FROM silences WHERE tenant = @tenant AND id = @id`;

/** @tenant null: every tenant's; those that end after @after. */
export const LIST_SILENCES = `SELECT ${COLUMNS} FROM silences WHERE (CAST(@tenant AS TEXT) IS NULL OR tenant = @tenant) AND ends_at > @after ORDER BY starts_at, id`;

/**
 * The version now and the silences written after @since, in one statement
 * (one snapshot): a row with no silence when none was.
 */
export const CHANGED_SILENCES = `
SELECT cur.v AS "version", ${columns('s.')}
FROM silence_version cur LEFT JOIN silences s ON s.v > @since ORDER BY s.starts_at, s.id`;

export interface ChangedRow extends Partial<SilenceRow> {
  version: number | string;
}

/** The answer of CHANGED_SILENCES. */
export function changedOf(rows: ChangedRow[]): { version: number; silences: Silence[] } {
  return {
    version: Number(rows[0]?.version ?? 0),
    silences: rows.filter((r) => r.id != null).map(({ version: _, ...r }) => silenceOf(r as SilenceRow)),
  };
}

/** What `list` binds for "ended any time". */
export const EVER = Number.MIN_SAFE_INTEGER;

/** Silences that ended at or before @before, at most @batch. */
export const SWEEP_SILENCES = `
DELETE FROM silences WHERE (tenant, id) IN (SELECT tenant, id FROM silences WHERE ends_at <= @before LIMIT @batch)`;

export interface SilenceRow extends Omit<Silence, 'matchers'> {
  matchers: string;
}

export const silenceOf = (r: SilenceRow): Silence => ({ ...r, matchers: JSON.parse(r.matchers) as Matcher[] });

/** The named parameters of a silence's row. */
export const silenceParams = (s: Silence) => ({
  tenant: s.tenant,
  id: s.id,
  matchers: JSON.stringify(s.matchers.map(({ name, value, isRegex, isEqual }) => ({ name, value, isRegex, isEqual }))),
  startsAt: s.startsAt,
  endsAt: s.endsAt,
  createdBy: s.createdBy,
  comment: s.comment,
  updatedAt: s.updatedAt,
});
