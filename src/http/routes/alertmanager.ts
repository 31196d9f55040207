import type { FastifyInstance } from 'fastify';
import type { AlertmanagerIngest } from '../../engine/alertmanager.js';
import { parseAlertmanager } from '../../inputs/alertmanager/schema.js';

/** Drop-in for Prometheus Alertmanager: a `webhook_configs` receiver pointed at this URL. */
export function alertmanagerRoutes(app: FastifyInstance, alerts: AlertmanagerIngest): void {
  app.post('/v1/alertmanager', async (req) => {
    const outcomes = await alerts.apply(parseAlertmanager(req.body), req.tenant, { requestId: req.id });
    return { status: 'success', alerts: outcomes };
  });
}
