import type { FastifyInstance } from 'fastify';
import type { Deduplicator, IncidentDecision } from '../../engine/deduplicator.js';
import { ApiError } from '../errors.js';
import { parseLimit } from '../query.js';
import { doc } from '../openapi/route-doc.js';
import { decisionBody, errorBody, incidentView, limitQuery } from '../openapi/schemas.js';
import { incidentSchema } from '../../inputs/incident/schema.js';
import { answerBatch, Batch, BATCH_DOC } from '../batch.js';
import type { ChargeItems } from '../access.js';
import { z } from 'zod';
import { parseWith } from '../../core/validation.js';
import { identityText } from '../../inputs/limits.js';

/** An acknowledgement's body, all optional: who acknowledged, as the key's history shows it. */
const ackSchema = z.strictObject({ by: identityText(128).optional() });

const LIST = { default: 100, max: 1000 };

/** A decision as POST /v1/incidents answers it. */
const answerOf = (d: IncidentDecision) => ({
  decision: d.decision,
  reason: d.reason,
  dedup_key: d.dedup_key,
  provisional: d.provisional,
  muted: d.muted ?? null,
});

export function incidentRoutes(app: FastifyInstance, dedup: Deduplicator, charge: ChargeItems): void {
  /** The caller's live incidents, most recently seen first (`?limit=1..1000`, default 100). */
  app.get<{ Querystring: { limit?: string } }>(
    '/v1/incidents',
    doc({
      summary: "The caller's live incidents, most recently seen first",
      access: 'tenant',
      tag: 'incidents',
      query: limitQuery(LIST.max, LIST.default),
      responses: {
        200: { description: 'up to `limit` live incidents', schema: { type: 'object', properties: { incidents: { type: 'array', items: incidentView } } } },
      },
    }),
    async (req) => {
      return { incidents: await dedup.listIncidents(req.tenant, parseLimit(req.query.limit, LIST)) };
    },
  );

  app.post(
    '/v1/incidents',
    doc({
      summary: 'Decide one correlated incident: CREATE, SUPPRESS or UPDATE',
      description: `\`dedup_key\` is \`dedup:\` + the first 32 hex digits of SHA-256 over \`element_id|fault_class|root_cause_id\` (a \`\\\\\` or \`|\` inside a field escaped with \`\\\\\`); the material fingerprint is \`severity|cleared\`. The TTL slides with every arrival. ${BATCH_DOC}`,
      access: 'tenant',
      tag: 'incidents',
      body: incidentSchema,
      responses: { 200: { description: 'the decision', schema: decisionBody }, 503: { description: 'the store cannot serve this now; retry' } },
    }),
    // Not async: on a store whose step never waits, with nothing configured that must be awaited, the
    // answer is sent within this turn of the event loop (fastify sends a handler's plain value at once).
    (req, reply) => {
      if (!(req.body instanceof Batch)) {
        const d = dedup.decideIncidentNow(req.body, req.tenant, { requestId: req.id });
        return d instanceof Promise ? d.then(answerOf) : answerOf(d);
      }
      charge(req, req.body.lines.length);
      const one = async (input: unknown) => answerOf(await dedup.decideIncident(input, req.tenant, { requestId: req.id }));
      return answerBatch(req, reply, req.body, one, (i) => [i.element_id, i.fault_class, i.root_cause_id]);
    },
  );

  app.get<{ Params: { key: string } }>(
    '/v1/incidents/:key',
    doc({
      summary: 'The live record of one incident',
      access: 'tenant',
      tag: 'incidents',
      params: { key: 'a key as GET /v1/incidents lists it: dedup:…, am:… (Alertmanager), pd:… (PagerDuty) or og:… (Opsgenie), percent-encoded' },
      responses: {
        200: { description: 'the record', schema: incidentView },
        400: { description: 'not a key GET /v1/incidents could list', schema: errorBody },
        404: { description: 'not live', schema: errorBody },
      },
    }),
    async (req) => {
      const view = await dedup.getIncident(req.params.key, req.tenant);
      if (!view) throw new ApiError('not_found', `incident ${req.params.key} is not live`);
      return view;
    },
  );

  app.post<{ Params: { key: string } }>(
    '/v1/incidents/:key/ack',
    doc({
      summary: "Acknowledge a live incident's episode: its adapters get one update saying so",
      description:
        "The first acknowledgement of an episode writes an `update` with `acknowledged: true` for the adapters its create went to (PagerDuty gets `acknowledge`), in the store's one step, and a line in the key's history; a repeat changes nothing and answers `repeat`. The body may be empty.",
      access: 'tenant',
      tag: 'incidents',
      params: { key: 'a key as GET /v1/incidents lists it: dedup:…, am:… (Alertmanager), pd:… (PagerDuty) or og:… (Opsgenie), percent-encoded' },
      body: ackSchema,
      responses: {
        200: {
          description: 'acknowledged now, or before (`repeat`)',
          schema: {
            type: 'object',
            required: ['dedup_key', 'outcome'],
            properties: { dedup_key: { type: 'string' }, outcome: { type: 'string', enum: ['acknowledged', 'repeat'] } },
          },
        },
        400: { description: 'not a key GET /v1/incidents could list, or a body that is not `{"by"?: text}`', schema: errorBody },
        404: { description: 'not live', schema: errorBody },
        503: { description: 'the store cannot serve this now; retry', schema: errorBody },
      },
    }),
    async (req) => {
      const { by } = parseWith(ackSchema, req.body === undefined ? {} : req.body, 'acknowledgement');
      const outcome = await dedup.acknowledgeIncident(req.params.key, req.tenant, { requestId: req.id }, by);
      if (outcome === 'absent') throw new ApiError('not_found', `incident ${req.params.key} is not live`);
      return { dedup_key: req.params.key, outcome };
    },
  );

  app.delete<{ Params: { key: string } }>(
    '/v1/incidents/:key',
    doc({
      summary: 'Close an incident: the next arrival of its key is a CREATE',
      access: 'tenant',
      tag: 'incidents',
      params: { key: 'a key as GET /v1/incidents lists it: dedup:…, am:… (Alertmanager), pd:… (PagerDuty) or og:… (Opsgenie), percent-encoded' },
      responses: {
        204: { description: 'closed' },
        400: { description: 'not a key GET /v1/incidents could list', schema: errorBody },
        404: { description: 'not live', schema: errorBody },
        503: { description: 'the store cannot serve this now; retry', schema: errorBody },
      },
    }),
    async (req, reply) => {
      if (!(await dedup.closeIncident(req.params.key, req.tenant, { requestId: req.id }))) {
        throw new ApiError('not_found', `incident ${req.params.key} is not live`);
      }
      return reply.code(204).send();
    },
  );
}
