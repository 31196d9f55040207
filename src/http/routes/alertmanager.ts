import type { FastifyInstance } from 'fastify';
import type { AlertmanagerIngest } from '../../engine/alertmanager.js';
import { parseAlertmanager } from '../../inputs/alertmanager/schema.js';
import { doc } from '../openapi/route-doc.js';
import { object } from '../openapi/schemas.js';
import { alertmanagerSchema } from '../../inputs/alertmanager/schema.js';

/** Drop-in for Prometheus Alertmanager: a `webhook_configs` receiver pointed at this URL. */
export function alertmanagerRoutes(app: FastifyInstance, alerts: AlertmanagerIngest): void {
  app.post(
    '/v1/alertmanager',
    doc({
      summary: "Prometheus Alertmanager's webhook (payload version 4)",
      description: 'One incident per alert fingerprint; `resolved` closes it; a late firing of a resolved episode (an HA peer) is absorbed.',
      access: 'tenant',
      tag: 'drop-in',
      body: alertmanagerSchema,
      responses: {
        200: {
          description: 'what each alert did',
          schema: { type: 'object', properties: { status: { const: 'success' }, alerts: { type: 'array', items: object } } },
        },
      },
    }),
    async (req) => {
      const outcomes = await alerts.apply(parseAlertmanager(req.body), req.tenant, { requestId: req.id });
      return { status: 'success', alerts: outcomes };
    },
  );
}
