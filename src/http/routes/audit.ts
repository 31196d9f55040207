import type { FastifyInstance } from 'fastify';
import type { DedupStore } from '../../store/contract/index.js';
import { ApiError } from '../errors.js';
import { parseLimit } from '../query.js';
import { doc } from '../openapi/route-doc.js';
import { errorBody, limitQuery, object } from '../openapi/schemas.js';

/** Ledger mode's audit trail of one key (the caller's tenant), oldest first. */
export function auditRoutes(app: FastifyInstance, store: DedupStore): void {
  app.get<{ Querystring: { key?: string; limit?: string } }>(
    '/v1/audit',
    doc({
      summary: 'Ledger mode: every decision of one key, when, why, which replica and request',
      access: 'tenant',
      tag: 'operations',
      query: { key: { description: 'the key', schema: { type: 'string' }, required: true }, ...limitQuery(10_000, 1000) },
      responses: {
        200: { description: 'the trail, oldest first', schema: object },
        404: { description: 'this store keeps no audit trail', schema: errorBody },
      },
    }),
    async (req) => {
      const { key, limit: raw } = req.query;
      if (!key) throw new ApiError('invalid_input', 'give the key: /v1/audit?key=…', [{ path: 'key', message: 'required' }]);
      const limit = parseLimit(raw, { default: 1000, max: 10_000 });
      if (!store.queries.auditTrail) {
        throw new ApiError('not_found', 'this store keeps no audit trail: ledger mode (retention: forever) records one on a postgres:// store');
      }
      const rows = await store.queries.auditTrail(req.tenant, key, limit);
      return {
        key,
        audit: rows.map((r) => ({
          at: new Date(r.at).toISOString(),
          kind: r.kind,
          decision: r.decision,
          reason: r.reason,
          replica: r.replica,
          request_id: r.requestId,
        })),
      };
    },
  );
}
