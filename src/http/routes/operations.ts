import type { FastifyInstance } from 'fastify';
import type { DedupStore } from '../../store/contract/index.js';
import type { Metrics } from '../../observe/metrics.js';
import { ApiError } from '../errors.js';

export function operationRoutes(app: FastifyInstance, store: DedupStore, metrics: Metrics): void {
  app.get('/healthz', async () => ({ status: 'ok' }));

  app.get('/readyz', async () => {
    try {
      await store.ping();
    } catch (error) {
      throw new ApiError('unavailable', `store ${store.kind} is not reachable: ${(error as Error).message}`);
    }
    return { status: 'ready', store: store.kind };
  });

  app.get('/metrics', async (_req, reply) => {
    reply.header('Content-Type', metrics.registry.contentType);
    return metrics.registry.metrics();
  });
}
