import type { FastifyInstance } from 'fastify';
import type { Config } from '../../config/schema.js';
import { tokenIndex } from '../../access/tenants.js';
import type { RateLimiter } from '../../access/rate-limit.js';
import { parsePagerdutyEvent } from '../../inputs/pagerduty/schema.js';
import type { PagerdutyIngest } from '../../engine/pagerduty.js';
import { admit, refuseToken } from '../access.js';
import { ApiError } from '../errors.js';
import { doc } from '../openapi/route-doc.js';

export const ENQUEUE = '/v2/enqueue';

/** PagerDuty's error body, which its clients parse: `status`, `message`, `errors`. */
export function pagerdutyError(e: ApiError) {
  return {
    status: e.status === 400 ? 'invalid event' : e.code,
    message: e.status === 400 ? 'Event object is invalid' : e.message,
    errors: e.issues?.map((i) => i.message) ?? [e.message],
  };
}

/** Drop-in PagerDuty Events API v2: point an integration's events URL at onceonly. */
export function enqueueRoutes(app: FastifyInstance, pagerduty: PagerdutyIngest, config: () => Config, limiter: RateLimiter): void {
  app.post(
    ENQUEUE,
    doc({
      summary: 'PagerDuty Events API v2: trigger, acknowledge, resolve',
      description: 'Answers as PagerDuty does, errors included. With tenants configured the token may come as `routing_key` instead of a bearer header.',
      access: 'tenant',
      tokenInBody: true,
      tag: 'drop-in',
      body: {
        type: 'object',
        required: ['routing_key', 'event_action'],
        properties: {
          routing_key: { type: 'string', maxLength: 255 },
          event_action: { enum: ['trigger', 'acknowledge', 'resolve'] },
          dedup_key: { type: 'string', maxLength: 255 },
          payload: {
            type: 'object',
            properties: {
              summary: { type: 'string' },
              source: { type: 'string' },
              severity: { enum: ['critical', 'error', 'warning', 'info'] },
              timestamp: { type: 'string' },
              component: { type: 'string' },
              group: { type: 'string' },
              class: { type: 'string' },
              custom_details: {},
            },
          },
        },
      },
      responses: {
        202: {
          description: 'processed',
          schema: { type: 'object', properties: { status: { const: 'success' }, message: { type: 'string' }, dedup_key: { type: 'string' } } },
        },
        400: {
          description: "PagerDuty's invalid-event body",
          schema: {
            type: 'object',
            properties: { status: { type: 'string' }, message: { type: 'string' }, errors: { type: 'array', items: { type: 'string' } } },
          },
        },
      },
    }),
    async (req, reply) => {
      if (!req.scoped) {
        // No Authorization header: with tenants configured the routing_key is the token. It is checked
        // before the body is validated, so that an unauthenticated body, valid or not, meets the
        // wrong-token throttle rather than the validator.
        const index = tokenIndex(config().tenants);
        if (index.enabled) {
          const key = (req.body as { routing_key?: unknown } | null)?.routing_key;
          const tenant = typeof key === 'string' ? index.lookup(key) : null;
          if (!tenant) refuseToken(req, limiter, 'the routing_key is not a valid token');
          admit(req, tenant, limiter);
        }
      }
      const parsed = parsePagerdutyEvent(req.body);
      if (!parsed.ok)
        throw new ApiError(
          'invalid_input',
          'Event object is invalid',
          parsed.errors.map((m) => ({ path: '', message: m })),
        );
      const r = await pagerduty.apply(parsed.event, req.tenant, { requestId: req.id });
      return reply.code(202).send({ status: 'success', message: 'Event processed', dedup_key: r.dedup_key });
    },
  );
}
