import type { FastifyInstance } from 'fastify';
import type { Deduplicator } from '../../engine/deduplicator.js';
import { ApiError } from '../errors.js';
import { parseLimit } from '../query.js';

const LIST = { default: 100, max: 1000 };

export function incidentRoutes(app: FastifyInstance, dedup: Deduplicator): void {
  /** The caller's live incidents, most recently seen first (`?limit=1..1000`, default 100). */
  app.get<{ Querystring: { limit?: string } }>('/v1/incidents', async (req) => {
    return { incidents: await dedup.listIncidents(req.tenant, parseLimit(req.query.limit, LIST)) };
  });

  app.post('/v1/incidents', async (req) => {
    const d = await dedup.decideIncident(req.body, req.tenant, { requestId: req.id });
    return { decision: d.decision, dedup_key: d.dedup_key, provisional: d.provisional };
  });

  app.get<{ Params: { key: string } }>('/v1/incidents/:key', async (req) => {
    const view = await dedup.getIncident(req.params.key, req.tenant);
    if (!view) throw new ApiError('not_found', `incident ${req.params.key} is not live`);
    return view;
  });

  app.delete<{ Params: { key: string } }>('/v1/incidents/:key', async (req, reply) => {
    if (!(await dedup.closeIncident(req.params.key, req.tenant, { requestId: req.id }))) {
      throw new ApiError('not_found', `incident ${req.params.key} is not live`);
    }
    return reply.code(204).send();
  });
}
