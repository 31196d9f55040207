import { ApiError } from './errors.js';

/** A page size from the query string: `page.default` when absent, else a whole number from 1 to `page.max` (400 otherwise). */
export function parseLimit(raw: unknown, page: { default: number; max: number }): number {
  if (raw === undefined) return page.default;
  const n = Number(raw);
  if (typeof raw !== 'string' || !/^\d+$/.test(raw) || n < 1 || n > page.max) {
    throw new ApiError('invalid_input', `limit must be a whole number from 1 to ${page.max}`, [
      { path: 'limit', message: `expected 1..${page.max}, got ${JSON.stringify(raw)}` },
    ]);
  }
  return n;
}
