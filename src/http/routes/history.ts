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
  recorder: Pick<HistoryRecorder, 'flush' | 'record'>;
  store: Pick<HistoryStore, 'read'>;
}

export function historyRoutes(app: FastifyInstance, history: HistorySource): void {
  app.get<{ Params: { key: string } }>(
    '/v1/incidents/:key/history',
    doc({
      summary: "One key's history: what was decided, muted, routed and delivered, oldest first",
      description:
        'Kept per key for `history.retention_seconds` after each event, at most `history.max_events` (docs/history.md lists the events). Also after the key closed or expired.',
      access: 'tenant',
      tag: 'incidents',
      params: { key: 'a key as GET /v1/incidents lists it, a violation window key or a group key, percent-encoded' },
      responses: {
        200: {
          description: "the key's events",
          schema: {
            type: 'object',
            required: ['key', 'events'],
            properties: {
              key: { type: 'string' },
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
      const events: StoredHistoryEvent[] = await history.store.read(req.tenant, key);
      if (events.length === 0) throw new ApiError('not_found', `no history is kept for ${key}`);
      return { key, events: inDecidedOrder(events).map(historyView) };
    },
  );
}
