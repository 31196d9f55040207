import type { FastifyInstance } from 'fastify';
import type { AlertmanagerIngest } from '../../engine/alertmanager.js';
import { parseAlertmanager } from '../../inputs/alertmanager/schema.js';
import type { RateLimiter } from '../../access/rate-limit.js';
import type { Config } from '../../config/schema.js';
import { chargeItems } from '../access.js';
import { ApiError } from '../errors.js';
import { doc } from '../openapi/route-doc.js';
import { object } from '../openapi/schemas.js';
import { alertmanagerSchema } from '../../inputs/alertmanager/schema.js';

/** Drop-in for Prometheus Alertmanager: a `webhook_configs` receiver pointed at this URL. */
export function alertmanagerRoutes(app: FastifyInstance, alerts: AlertmanagerIngest, config: () => Config, limiter: RateLimiter): void {
  app.post(
    '/v1/alertmanager',
    doc({
      summary: "Prometheus Alertmanager's webhook (payload version 4)",
      description: 'One incident per alert fingerprint; `resolved` closes it; a late firing of a resolved episode (an HA peer) is absorbed.',
      access: 'tenant',
      tag: 'drop-in',
      body: alertmanagerSchema,
      responses: {
        413: {
          description:
            "over `limits.body_bytes`, more than `limits.alerts_per_post` alerts (1,000 by default), or more alerts than the tenant's rate_limit.burst",
        },
        200: {
          description: 'what each alert did',
          schema: { type: 'object', properties: { status: { const: 'success' }, alerts: { type: 'array', items: object } } },
        },
      },
    }),
    async (req) => {
      const n = Array.isArray((req.body as { alerts?: unknown } | null)?.alerts) ? (req.body as { alerts: unknown[] }).alerts.length : 0;
      const most = config().limits.alerts_per_post;
      if (n > most)
        throw new ApiError('payload_too_large', `at most ${most} alerts per post (this one has ${n}): lower max_alerts in the receiver, or split the batch`);
      // Each alert is a decision: each costs the tenant one token, taken before the alerts are
      // validated, so that posts of bad alerts cost validation work only at the tenant's rate.
      chargeItems(req, config(), limiter, n);
      const payload = parseAlertmanager(req.body);
      const outcomes = await alerts.apply(payload, req.tenant, { requestId: req.id });
      return { status: 'success', alerts: outcomes };
    },
  );
}
