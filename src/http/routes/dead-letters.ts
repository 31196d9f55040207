import type { FastifyInstance } from 'fastify';
import type { Delivery, DeliveryStore } from '../../store/contract/index.js';
import { deliveryIdentity } from '../../delivery/identity.js';
import { ApiError } from '../errors.js';
import { parseLimit } from '../query.js';
import { doc } from '../openapi/route-doc.js';
import { errorBody, limitQuery, object } from '../openapi/schemas.js';
import type { HistoryRecorder } from '../../history/recorder.js';

/** Dead letters looked through to name the key a retry or drop acts on, in its history. */
const NAMED_WITHIN = 1000;

export const DEAD_LETTER_PAGE = { default: 100, max: 1000 };

/** A dead letter as the API shows it: what was to be delivered, where, and every attempt's time and error. */
export function deadLetterView(d: Delivery) {
  const e = d.entry;
  return {
    id: d.id,
    adapter: d.adapter,
    tenant: e.tenant,
    kind: e.kind,
    action: e.action,
    key: e.key,
    idempotency_key: `${deliveryIdentity(e.tenant, e.key)}:${e.action}:${d.n}`,
    payload: { action: e.action, kind: e.kind, key: e.key, tenant: e.tenant, severity: e.severity, summary: e.summary, data: e.data },
    decided_at: new Date(e.at).toISOString(),
    dead_at: d.deadAt === undefined ? null : new Date(d.deadAt).toISOString(),
    attempts: d.attempts.map((a) => ({ at: new Date(a.at).toISOString(), error: a.error })),
    /** later deliveries of this key to this adapter, held behind it until it is retried or dropped */
    waiting: d.waiting ?? 0,
  };
}

/** Dead letters of the caller's tenant: list them, put one back in the queue, or drop one for good. */
export function deadLetterRoutes(app: FastifyInstance, deliveries: DeliveryStore, history?: Pick<HistoryRecorder, 'record'>): void {
  app.get<{ Querystring: Record<string, unknown> }>(
    '/v1/dead-letters',
    doc({
      summary: "The caller's dead letters, oldest first: payload, adapter, every attempt",
      access: 'tenant',
      tag: 'delivery',
      query: limitQuery(DEAD_LETTER_PAGE.max, DEAD_LETTER_PAGE.default),
      responses: { 200: { description: 'dead letters', schema: object }, 503: { description: 'the store cannot serve this now; retry', schema: errorBody } },
    }),
    async (req) => {
      const unknown = Object.keys(req.query).filter((k) => k !== 'limit');
      if (unknown.length > 0) {
        throw new ApiError(
          'invalid_input',
          `unknown query parameter ${JSON.stringify(unknown[0])}`,
          unknown.map((k) => ({ path: k, message: 'unknown query parameter (known: limit)' })),
        );
      }
      const list = await deliveries.deadLetters(req.tenant, parseLimit(req.query.limit, DEAD_LETTER_PAGE));
      return { dead_letters: list.map(deadLetterView) };
    },
  );

  /**
   * The dead letter an operator acts on, for its key's history (the store's retry and drop answer
   * only whether one was there). Looked up before the act among the tenant's oldest NAMED_WITHIN;
   * one past them is acted on all the same, and its history misses the line.
   */
  const deadLetterOf = async (tenant: string, id: string) =>
    history ? ((await deliveries.deadLetters(tenant, NAMED_WITHIN).catch(() => [])).find((x) => x.id === id) ?? null) : null;

  app.post<{ Params: { id: string } }>(
    '/v1/dead-letters/:id/retry',
    doc({
      summary: 'Put one dead letter back in the delivery queue, due now, with a fresh retry budget',
      access: 'tenant',
      tag: 'delivery',
      params: { id: 'the dead letter id' },
      responses: { 202: { description: 'queued', schema: object }, 404: { description: 'no such dead letter', schema: errorBody } },
    }),
    async (req, reply) => {
      const d = await deadLetterOf(req.tenant, req.params.id);
      if (!(await deliveries.retryDeadLetter(req.tenant, req.params.id))) {
        throw new ApiError('not_found', `no dead letter ${JSON.stringify(req.params.id)}`);
      }
      if (d) history?.record(d.entry.tenant, d.entry.key, { type: 'retried', adapter: d.adapter, action: d.entry.action, id: d.id });
      return reply.code(202).send({ id: req.params.id, status: 'queued' });
    },
  );

  app.delete<{ Params: { id: string } }>(
    '/v1/dead-letters/:id',
    doc({
      summary: 'Drop one dead letter for good: it is never delivered, and the later deliveries of its key to its adapter, held behind it, go on',
      access: 'tenant',
      tag: 'delivery',
      params: { id: 'the dead letter id' },
      responses: {
        204: { description: 'dropped' },
        404: { description: 'no such dead letter', schema: errorBody },
        503: { description: 'the store cannot serve this now; retry', schema: errorBody },
      },
    }),
    async (req, reply) => {
      const d = await deadLetterOf(req.tenant, req.params.id);
      if (!(await deliveries.dropDeadLetter(req.tenant, req.params.id))) {
        throw new ApiError('not_found', `no dead letter ${JSON.stringify(req.params.id)}`);
      }
      if (d)
        history?.record(d.entry.tenant, d.entry.key, {
          type: 'dropped',
          adapter: d.adapter,
          action: d.entry.action,
          id: d.id,
          reason: 'dead letter dropped by an operator',
        });
      return reply.code(204).send();
    },
  );
}
