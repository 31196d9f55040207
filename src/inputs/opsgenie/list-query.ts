import type { OgParse } from './schema.js';

/** Opsgenie's list parameters as onceonly takes them (`GET /v2/alerts`). */
export interface OgList {
  offset: number;
  limit: number;
  sort: 'createdAt' | 'updatedAt' | 'count';
  order: 'asc' | 'desc';
}

const SORTS = ['createdAt', 'updatedAt', 'count'] as const;
/** Opsgenie's bounds: at most 100 a page, 20 by default; an offset past 20,000 is refused. */
const MAX_LIMIT = 100;
const MAX_OFFSET = 20_000;

const whole = (v: unknown, min: number, max: number): number | null => {
  if (typeof v !== 'string' || !/^\d{1,6}$/.test(v)) return null;
  const n = Number(v);
  return n >= min && n <= max ? n : null;
};

/**
 * `offset`, `limit`, `sort` and `order` as Opsgenie takes them, and its
 * `query` as far as onceonly keeps what it searches: empty, or `status:open`
 * (every alert onceonly holds is open). Any other query is refused naming
 * `query` rather than answered as if it matched everything.
 */
export function parseListQuery(q: Record<string, unknown>): OgParse<OgList> {
  const errors: Record<string, string> = {};
  const offset = q.offset === undefined ? 0 : whole(q.offset, 0, MAX_OFFSET);
  if (offset === null) errors.offset = `offset must be a whole number from 0 to ${MAX_OFFSET}.`;
  const limit = q.limit === undefined ? 20 : whole(q.limit, 1, MAX_LIMIT);
  if (limit === null) errors.limit = `limit must be a whole number from 1 to ${MAX_LIMIT}.`;
  const sort = q.sort ?? 'createdAt';
  if (!SORTS.includes(sort as OgList['sort'])) errors.sort = `sort must be one of ${SORTS.join(', ')}.`;
  const order = q.order ?? 'desc';
  if (order !== 'asc' && order !== 'desc') errors.order = 'order must be asc or desc.';
  const query = q.query ?? '';
  if (typeof query !== 'string' || !/^\s*(status\s*:\s*open)?\s*$/i.test(query))
    errors.query = 'query may only be status:open: onceonly holds open alerts, and searches nothing else.';
  if (Object.keys(errors).length > 0) return { ok: false, errors };
  return { ok: true, value: { offset: offset!, limit: limit!, sort: sort as OgList['sort'], order: order as OgList['order'] } };
}
