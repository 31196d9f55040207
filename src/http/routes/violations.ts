import type { FastifyInstance } from 'fastify';
import type { ViolationIngest } from '../../engine/violations.js';
import { doc } from '../openapi/route-doc.js';
import { errorBody } from '../openapi/schemas.js';
import { violationSchema } from '../../inputs/violation/schema.js';

export function violationRoutes(app: FastifyInstance, violations: ViolationIngest): void {
  app.post(
    '/v1/violations',
    doc({
      summary: 'Decide one SPC control-chart violation: CREATE or SUPPRESS per process, rule and time window',
      access: 'tenant',
      tag: 'violations',
      body: violationSchema,
      responses: {
        200: {
          description: 'the decision, with the alarm code and severity from the rule table',
          schema: {
            type: 'object',
            properties: {
              decision: { type: 'string', enum: ['CREATE', 'SUPPRESS'] },
              key: { type: 'string' },
              alarm_code: { type: 'string' },
              severity: { type: 'string' },
            },
          },
        },
        503: { description: 'the store cannot serve this now; retry', schema: errorBody },
      },
    }),
    async (req) => {
      const d = await violations.apply(req.body, req.tenant, { requestId: req.id });
      return { decision: d.decision, key: d.key, alarm_code: d.alarm_code, severity: d.severity };
    },
  );
}
