import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { alertView, type OpsgenieIngest } from '../../engine/opsgenie.js';
import { parseAlertRef } from '../../inputs/opsgenie/alert-id.js';
import { MAX_ALIAS, OG_EDITS, OG_PRIORITIES, parseOpsgenieAlert, parseOpsgenieEdit } from '../../inputs/opsgenie/schema.js';
import type { ApiError } from '../errors.js';
import { doc } from '../openapi/route-doc.js';

/** The routes that answer as Opsgenie does, errors included. */
export const OPSGENIE_ALERTS = '/v2/alerts';
export const OPSGENIE_ROUTES = new Set([
  OPSGENIE_ALERTS,
  `${OPSGENIE_ALERTS}/:identifier`,
  `${OPSGENIE_ALERTS}/:identifier/close`,
  `${OPSGENIE_ALERTS}/:identifier/acknowledge`,
  ...OG_EDITS.map((field) => `${OPSGENIE_ALERTS}/:identifier/${field}`),
]);

/** Seconds since the request arrived, as Opsgenie's `took`. */
const took = (reply: FastifyReply) => Number((reply.elapsedTime / 1000).toFixed(3));

/** Opsgenie's error body, which its clients log: `message`, `took`, `requestId`, and `errors` by field for a body it cannot process. */
export function opsgenieError(e: ApiError, req: FastifyRequest, reply: FastifyReply) {
  const message =
    e.code === 'unauthorized'
      ? 'Could not authenticate'
      : e.code === 'invalid_input' && e.message.startsWith('request body is not valid JSON')
        ? 'Could not parse request body, please check your JSON.'
        : e.message;
  return { message, took: took(reply), requestId: req.id };
}

const accepted = (req: FastifyRequest, reply: FastifyReply) =>
  reply.code(202).send({ result: 'Request will be processed', took: took(reply), requestId: req.id });
const unprocessable = (req: FastifyRequest, reply: FastifyReply, errors: Record<string, string>) =>
  reply.code(422).send({ message: 'Request body is not processable. Please check the errors.', errors, took: took(reply), requestId: req.id });

const processing = {
  description: "Opsgenie's answer: the request is taken (the decision is made and durable before it is sent)",
  schema: {
    type: 'object',
    required: ['result', 'took', 'requestId'],
    properties: { result: { const: 'Request will be processed' }, took: { type: 'number' }, requestId: { type: 'string' } },
  },
};
const refused = {
  description: "Opsgenie's error body: `message`, `errors` by field, `took`, `requestId`",
  schema: {
    type: 'object',
    required: ['message', 'took', 'requestId'],
    properties: {
      message: { type: 'string' },
      errors: { type: 'object', additionalProperties: { type: 'string' } },
      took: { type: 'number' },
      requestId: { type: 'string' },
    },
  },
};
const identifierQuery = {
  identifierType: {
    description: '`id` (the default: an id a read answered, that episode only) or `alias` (any open episode); `tiny` is refused',
    schema: { enum: ['id', 'alias', 'tiny'] },
    required: false,
  },
};
const actionBody = { type: 'object', properties: { user: { type: 'string' }, source: { type: 'string' }, note: { type: 'string' } } };

/**
 * Drop-in for Opsgenie's Alert API: integrations, scripts and Alertmanager's
 * `opsgenie_configs` pointed at onceonly keep working, with the alias as the
 * incident `og:<alias>`. `Authorization: GenieKey <token>` is a tenant token.
 */
export function opsgenieAlertRoutes(app: FastifyInstance, opsgenie: OpsgenieIngest): void {
  app.post(
    OPSGENIE_ALERTS,
    doc({
      summary: "Opsgenie's Alert API: create an alert",
      description:
        'The alias (the message as cut to 130 characters, when none is given) is the incident `og:<alias>`; a create of an open alias is a repeat, a new priority an update. P1 → CRITICAL, P2 → MAJOR, P3 → MINOR, P4 and P5 → INFO.',
      access: 'tenant',
      tag: 'drop-in',
      body: {
        type: 'object',
        required: ['message'],
        properties: {
          message: { type: 'string', description: 'cut to 130 characters, as Opsgenie does' },
          alias: { type: 'string', maxLength: MAX_ALIAS },
          description: { type: 'string', description: 'cut to 15,000 characters' },
          priority: { enum: [...OG_PRIORITIES], default: 'P3' },
          tags: { type: 'array', maxItems: 20, items: { type: 'string', maxLength: 50 } },
          details: { type: 'object', additionalProperties: { type: 'string' } },
          entity: { type: 'string', maxLength: 512 },
          source: { type: 'string', maxLength: 100 },
        },
      },
      responses: { 202: processing, 422: refused },
    }),
    async (req, reply) => {
      const parsed = parseOpsgenieAlert(req.body);
      if (!parsed.ok) return unprocessable(req, reply, parsed.errors);
      await opsgenie.create(parsed.value, req.tenant, { requestId: req.id });
      return accepted(req, reply);
    },
  );

  app.get<{ Params: { identifier: string }; Querystring: { identifierType?: string } }>(
    `${OPSGENIE_ALERTS}/:identifier`,
    doc({
      summary: "Opsgenie's Alert API: read an open alert",
      description:
        'The open alert `og:<alias>` by its alias (`identifierType=alias`) or by the `id` this answered (the default type; the id of an earlier episode finds nothing). What onceonly does not keep (`tinyId`, `owner`, `responders`, `teams`) is left out; `details` are the details as label names.',
      access: 'tenant',
      tag: 'drop-in',
      params: { identifier: 'the alert’s alias or id, percent-encoded' },
      query: {
        identifierType: { description: '`id` (the default) or `alias`; `tiny` is refused', schema: { enum: ['id', 'alias', 'tiny'] }, required: false },
      },
      responses: {
        200: {
          description: "Opsgenie's answer: `data` the alert, `took`, `requestId`",
          schema: {
            type: 'object',
            required: ['data', 'took', 'requestId'],
            properties: { data: { type: 'object' }, took: { type: 'number' }, requestId: { type: 'string' } },
          },
        },
        404: refused,
        422: refused,
      },
    }),
    async (req, reply) => {
      const ref = parseAlertRef(req.params.identifier, req.query.identifierType);
      if (!ref.ok) return unprocessable(req, reply, ref.errors);
      const rec = await opsgenie.get(ref.value, req.tenant);
      if (!rec) return reply.code(404).send({ message: 'Alert does not exist', took: took(reply), requestId: req.id });
      return reply.code(200).send({ data: alertView(ref.value.alias, rec), took: took(reply), requestId: req.id });
    },
  );

  const editBody = {
    message: { type: 'object', required: ['message'], properties: { message: { type: 'string', description: 'cut to 130 characters, as Opsgenie does' } } },
    description: {
      type: 'object',
      required: ['description'],
      properties: { description: { type: 'string', description: 'cut to 15,000 characters' } },
    },
    priority: { type: 'object', required: ['priority'], properties: { priority: { enum: [...OG_PRIORITIES] } } },
  } as const;
  for (const field of OG_EDITS) {
    app.put<{ Params: { identifier: string }; Querystring: { identifierType?: string } }>(
      `${OPSGENIE_ALERTS}/:identifier/${field}`,
      doc({
        summary: `Opsgenie's Alert API: update an alert's ${field}`,
        description: `Changes the ${field} of the open incident \`og:<alias>\`, named by its alias or by the \`id\` a read answered (that episode only): an UPDATE delivered to its adapters${field === 'priority' ? ', its severity following the priority (P1 → CRITICAL … P4, P5 → INFO)' : ''}. Never opens an alert: one with nothing open is answered as Opsgenie answers it, 202, and nothing changes.`,
        access: 'tenant',
        tag: 'drop-in',
        params: { identifier: 'the alert’s id or alias, percent-encoded' },
        query: identifierQuery,
        body: editBody[field],
        responses: { 202: processing, 422: refused },
      }),
      async (req, reply) => {
        const ref = parseAlertRef(req.params.identifier, req.query.identifierType);
        if (!ref.ok) return unprocessable(req, reply, ref.errors);
        const edit = parseOpsgenieEdit(field, req.body);
        if (!edit.ok) return unprocessable(req, reply, edit.errors);
        await opsgenie.edit(ref.value, edit.value, req.tenant, { requestId: req.id });
        return accepted(req, reply);
      },
    );
  }

  for (const action of ['close', 'acknowledge'] as const) {
    app.post<{ Params: { identifier: string }; Querystring: { identifierType?: string } }>(
      `${OPSGENIE_ALERTS}/:identifier/${action}`,
      doc({
        summary: action === 'close' ? "Opsgenie's Alert API: close an alert" : "Opsgenie's Alert API: acknowledge an alert",
        description:
          action === 'close'
            ? 'Closes the incident `og:<alias>`, named by its alias or by the `id` a read answered (that episode only: an id from an earlier episode closes nothing); the next create of the alias opens a new one. An alert with nothing open to close is answered as Opsgenie answers it: 202.'
            : 'Acknowledges the incident `og:<alias>`, named by its alias or by the `id` a read answered (that episode only); delivered as an update, once per episode.',
        access: 'tenant',
        tag: 'drop-in',
        params: { identifier: 'the alert’s id or alias, percent-encoded' },
        query: identifierQuery,
        body: actionBody,
        responses: { 202: processing, 422: refused },
      }),
      async (req, reply) => {
        const ref = parseAlertRef(req.params.identifier, req.query.identifierType);
        if (!ref.ok) return unprocessable(req, reply, ref.errors);
        const origin = { requestId: req.id };
        await (action === 'close' ? opsgenie.close(ref.value, req.tenant, origin) : opsgenie.acknowledge(ref.value, req.tenant, origin));
        return accepted(req, reply);
      },
    );
  }
}
