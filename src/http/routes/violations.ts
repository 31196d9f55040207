import type { FastifyInstance } from 'fastify';
import type { ViolationIngest } from '../../engine/violations.js';

export function violationRoutes(app: FastifyInstance, violations: ViolationIngest): void {
  app.post('/v1/violations', async (req) => {
    const d = await violations.apply(req.body, req.tenant, { requestId: req.id });
    return { decision: d.decision, key: d.key, alarm_code: d.alarm_code, severity: d.severity };
  });
}
