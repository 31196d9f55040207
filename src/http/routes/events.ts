import type { FastifyInstance } from 'fastify';
import type { EventIngest } from '../../engine/events.js';
import type { EventAccounting } from '../../observe/event-accounting.js';
import { ApiError } from '../errors.js';

export function eventRoutes(app: FastifyInstance, events: EventIngest, accounting: EventAccounting): void {
  app.post('/v1/events', async (req) => {
    const o = await events.apply(req.body, req.scoped ? req.tenant : undefined, { requestId: req.id });
    accounting.decided(o, req.tenant);
    return { outcome: o.outcome, reason: o.reason, gap: o.gap, transition: o.transition };
  });

  app.get<{ Params: { tenant: string; device: string } }>('/v1/devices/:tenant/:device', async (req) => {
    // Another tenant's device answers exactly as a device never seen: existence does not leak.
    const view = req.scoped && req.params.tenant !== req.tenant ? null : await events.device(req.params.tenant, req.params.device);
    if (!view) throw new ApiError('not_found', `device ${req.params.device} of tenant ${req.params.tenant} was never seen`);
    return view;
  });

  app.get('/v1/stats', async (req) => accounting.snapshot(req.tenant));
}
