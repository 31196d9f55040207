import type { FastifyInstance } from 'fastify';
import type { ViolationIngest } from '../../engine/violations.js';
import { doc } from '../openapi/route-doc.js';
import { errorBody, mutedBody } from '../openapi/schemas.js';
import { violationSchema } from '../../inputs/violation/schema.js';
import type { ChargeItems } from '../access.js';
import { answerBatch, Batch, BATCH_DOC } from '../batch.js';

export function violationRoutes(app: FastifyInstance, violations: ViolationIngest, charge: ChargeItems): void {
  app.post(
    '/v1/violations',
    doc({
      summary: 'Decide one SPC control-chart violation: CREATE or SUPPRESS per process, rule and time window',
      description: BATCH_DOC,
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
              muted: mutedBody,
            },
          },
        },
        503: { description: 'the store cannot serve this now; retry', schema: errorBody },
      },
    }),
    async (req, reply) => {
      const one = async (input: unknown) => {
        const d = await violations.apply(input, req.tenant, { requestId: req.id });
        return { decision: d.decision, key: d.key, alarm_code: d.alarm_code, severity: d.severity, muted: d.muted };
      };
      if (!(req.body instanceof Batch)) return one(req.body);
      charge(req, req.body.lines.length);
      return answerBatch(req, reply, req.body, one, (v) => [v.process_id, v.rule_id]);
    },
  );
}
