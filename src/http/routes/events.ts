import type { FastifyInstance } from 'fastify';
import type { EventIngest } from '../../engine/events.js';
import type { EventAccounting } from '../../observe/event-accounting.js';
import { ApiError } from '../errors.js';
import { doc } from '../openapi/route-doc.js';
import { errorBody, object } from '../openapi/schemas.js';
import { eventSchema } from '../../inputs/event/schema.js';
import type { ChargeItems } from '../access.js';
import { answerBatch, Batch, BATCH_DOC } from '../batch.js';
import { eventRefusal } from '../error-mapping.js';

export function eventRoutes(app: FastifyInstance, events: EventIngest, accounting: EventAccounting, charge: ChargeItems): void {
  app.post(
    '/v1/events',
    doc({
      summary: 'Apply one device status event, once and in order',
      description: `The identity is (tenant_id, device_id, boot_id, sequence). A repeat is \`duplicate\`; an event older than the device state is \`rejected\` with a reason; \`gap\` names missing sequence numbers; \`transition\` a state change (delivered as \`notify\`). ${BATCH_DOC}`,
      access: 'tenant',
      tag: 'events',
      body: eventSchema,
      responses: {
        200: {
          description: 'applied, duplicate or rejected',
          schema: {
            type: 'object',
            required: ['outcome'],
            properties: {
              outcome: { type: 'string', enum: ['applied', 'duplicate', 'rejected'] },
              reason: { type: ['string', 'null'] },
              gap: { type: ['object', 'null'] },
              transition: { type: ['object', 'null'] },
            },
          },
        },
        403: { description: "another tenant's event", schema: errorBody },
        503: { description: 'the store cannot serve this now; retry', schema: errorBody },
      },
    }),
    async (req, reply) => {
      const one = async (input: unknown) => {
        const o = await events.apply(input, req.scoped ? req.tenant : undefined, { requestId: req.id });
        accounting.decided(o, req.tenant);
        return { outcome: o.outcome, reason: o.reason, gap: o.gap, transition: o.transition };
      };
      if (!(req.body instanceof Batch)) return one(req.body);
      charge(req, req.body.lines.length);
      // A refused line is counted as a refused request is, so received = applied + duplicate + rejected holds.
      return answerBatch(
        req,
        reply,
        req.body,
        one,
        (e) => [e.tenant_id, e.device_id],
        (line) => {
          if (line.error) accounting.refused(eventRefusal(line.error.code), req.tenant);
        },
      );
    },
  );

  app.get<{ Params: { tenant: string; device: string } }>(
    '/v1/devices/:tenant/:device',
    doc({
      summary: "A device's state, age and stale flag",
      access: 'tenant',
      tag: 'events',
      params: { tenant: 'tenant_id', device: 'device_id' },
      responses: { 200: { description: 'the device', schema: object }, 404: { description: "never seen (or another tenant's)", schema: errorBody } },
    }),
    async (req) => {
      // Another tenant's device answers exactly as a device never seen: existence does not leak.
      const view = req.scoped && req.params.tenant !== req.tenant ? null : await events.device(req.params.tenant, req.params.device);
      if (!view) throw new ApiError('not_found', `device ${req.params.device} of tenant ${req.params.tenant} was never seen`);
      return view;
    },
  );

  app.get(
    '/v1/stats',
    doc({
      summary: 'The event accounting: received = applied + duplicate + rejected',
      access: 'tenant',
      tag: 'events',
      responses: { 200: { description: 'the counters', schema: object } },
    }),
    async (req) => accounting.snapshot(req.tenant),
  );
}
