import type { FastifyInstance } from 'fastify';
import type { DedupStore } from '../../store/contract/index.js';
import type { Metrics } from '../../observe/metrics.js';
import { ApiError } from '../errors.js';
import { doc } from '../openapi/route-doc.js';
import { errorBody, object } from '../openapi/schemas.js';

export function operationRoutes(app: FastifyInstance, store: DedupStore, metrics: Metrics, storeResetAt: () => number | null = () => null): void {
  app.get(
    '/healthz',
    doc({ summary: 'The process is up', access: 'open', tag: 'operations', responses: { 200: { description: 'up', schema: object } } }),
    async () => ({ status: 'ok' }),
  );

  app.get(
    '/readyz',
    doc({
      summary: 'The store is reachable',
      access: 'open',
      tag: 'operations',
      responses: {
        200: { description: 'ready', schema: object },
        503: { description: 'the store is not reachable, or this replica is failing open', schema: errorBody },
      },
    }),
    async () => {
      try {
        await store.ping();
      } catch (error) {
        throw new ApiError('unavailable', `store ${store.kind} is not reachable: ${(error as Error).message}`);
      }
      // Ready, and saying so when the store lost its data since this replica started: it serves on, anew.
      const reset = storeResetAt();
      return { status: 'ready', store: store.kind, ...(reset !== null ? { store_reset_at: new Date(reset).toISOString() } : {}) };
    },
  );

  app.get(
    '/metrics',
    doc({
      summary: 'Prometheus metrics',
      access: 'open',
      tag: 'operations',
      responses: { 200: { description: 'the text exposition format', schema: { type: 'string' }, contentType: 'text/plain' } },
    }),
    async (_req, reply) => {
      reply.header('Content-Type', metrics.registry.contentType);
      return metrics.registry.metrics();
    },
  );
}
