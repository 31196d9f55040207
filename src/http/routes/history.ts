import type { FastifyInstance } from 'fastify';
import { ApiError } from '../errors.js';
import { doc } from '../openapi/route-doc.js';
import { errorBody } from '../openapi/schemas.js';
import { isStoreKey } from '../../inputs/store-key.js';
import type { HistoryStore, StoredHistoryEvent } from '../../store/contract/index.js';
import type { HistoryRecorder } from '../../history/recorder.js';
import { historyView } from '../../history/view.js';
import { inDecidedOrder } from '../../history/order.js';

/** A violation's window key (40 hex) and a group's key, besides every key GET /v1/incidents lists. */
const OTHER_KEY = /^(?:[0-9a-f]{40}|group:[0-9a-f]{32})$/;
const KEY_RULE =
  'must be a key as GET /v1/incidents lists it ("dedup:…", "am:…", "pd:…", "og:…"), a violation window key (40 lowercase hex) or a group key ("group:" and 32 lowercase hex)';

export const isHistoryKey = (key: string) => isStoreKey(key) || OTHER_KEY.test(key);

export interface HistorySource {
  recorder: Pick<HistoryRecorder, 'flush' | 'record' | 'on'>;
  store: Pick<HistoryStore, 'read'>;
}

/** The most events one answer holds: a page of a key's history (`limit`), and the default. */
export const HISTORY_PAGE_MAX = 500;

/** `limit` and `before` of a history read, checked: a whole number in range each, or absent. */
function pageOf(query: Record<string, unknown>): { limit: number; before: number | null } {
  const num = (name: string, min: number, max: number): number | null => {
    const v = query[name];
    if (v === undefined) return null;
    if (typeof v !== 'string' || !/^\d{1,9}$/.test(v) || Number(v) < min || Number(v) > max)
      throw new ApiError('invalid_input', `${name} must be a whole number from ${min} to ${max}`, [
        { path: name, message: `must be a whole number from ${min} to ${max}` },
      ]);
    return Number(v);
  };
  return { limit: num('limit', 1, HISTORY_PAGE_MAX) ?? HISTORY_PAGE_MAX, before: num('before', 0, 1_000_000_000) };
}

export function historyRoutes(app: FastifyInstance, history: HistorySource): void {
  app.get<{ Params: { key: string }; Querystring: Record<string, unknown> }>(
    '/v1/incidents/:key/history',
    doc({
      summary: "One key's history: what was decided, muted, routed and delivered, oldest first",
      description:
        'Kept per key for `history.retention_seconds` after each event, at most `history.max_events` (docs/history.md lists the events). Also after the key closed or expired. Paged: `limit` (1..500, default 500) of the newest events before `before` (an event index, as `more.before` gives it), oldest first; `more` is there when older events are left.',
      access: 'tenant',
      tag: 'incidents',
      params: { key: 'a key as GET /v1/incidents lists it, a violation window key or a group key, percent-encoded' },
      query: {
        limit: { description: 'the most events in this answer (default 500)', schema: { type: 'integer', minimum: 1, maximum: HISTORY_PAGE_MAX } },
        before: { description: 'only events before this index (from `more.before` of a later page)', schema: { type: 'integer', minimum: 0 } },
      },
      responses: {
        200: {
          description: "the key's events",
          schema: {
            type: 'object',
            required: ['key', 'events'],
            properties: {
              key: { type: 'string' },
              more: {
                type: 'object',
                description: 'older events are left: ask again with this `before`',
                properties: { before: { type: 'integer' } },
              },
              events: {
                type: 'array',
                items: { type: 'object', required: ['at', 'type'], properties: { at: { type: 'string', format: 'date-time' }, type: { type: 'string' } } },
              },
            },
          },
        },
        400: { description: 'not a key with a history', schema: errorBody },
        404: { description: 'no history kept for this key (never arrived, past its retention, or another tenant’s)', schema: errorBody },
      },
    }),
    async (req) => {
      const key = req.params.key;
      if (!isHistoryKey(key)) throw new ApiError('invalid_input', `invalid key: ${KEY_RULE}`, [{ path: 'key', message: KEY_RULE }]);
      // What this replica recorded a moment ago is read back too.
      await history.recorder.flush();
      const { limit, before } = pageOf(req.query);
      const events: StoredHistoryEvent[] = await history.store.read(req.tenant, key);
      if (events.length === 0) throw new ApiError('not_found', `no history is kept for ${key}`);
      // A page: the newest `limit` events before `before`, oldest first; indexes count from the oldest kept.
      const ordered = inDecidedOrder(events);
      const end = before === null ? ordered.length : Math.min(before, ordered.length);
      const start = Math.max(0, end - limit);
      return { key, events: ordered.slice(start, end).map(historyView), ...(start > 0 ? { more: { before: start } } : {}) };
    },
  );
}
