import type { FastifyInstance } from 'fastify';
import { alertView, OG_LISTED, type OpsgenieIngest } from '../../engine/opsgenie.js';
import { parseListQuery } from '../../inputs/opsgenie/list-query.js';
import { namedIn, openAlert, resolved } from './opsgenie-ref.js';
import { MAX_ALIAS, OG_PRIORITIES, parseOpsgenieAlert } from '../../inputs/opsgenie/schema.js';
import { doc } from '../openapi/route-doc.js';
import { OPSGENIE_EDIT_ROUTES, opsgenieEditRoutes } from './opsgenie-edits.js';
import { OPSGENIE_NOTE_ROUTE, opsgenieNoteRoutes } from './opsgenie-notes.js';
import type { HistorySource } from './history.js';
import { accepted, identifierQuery, listed, responderList, OPSGENIE_ALERTS, processing, refused, took, unprocessable } from './opsgenie-shape.js';

export { opsgenieError } from './opsgenie-shape.js';

/** The routes that answer as Opsgenie does, errors included. */
export const OPSGENIE_ROUTES = new Set([
  OPSGENIE_ALERTS,
  `${OPSGENIE_ALERTS}/:identifier`,
  `${OPSGENIE_ALERTS}/:identifier/close`,
  `${OPSGENIE_ALERTS}/:identifier/acknowledge`,
  ...OPSGENIE_EDIT_ROUTES,
  OPSGENIE_NOTE_ROUTE,
]);

const actionBody = { type: 'object', properties: { user: { type: 'string' }, source: { type: 'string' }, note: { type: 'string' } } };

/**
 * Drop-in for Opsgenie's Alert API: integrations, scripts and Alertmanager's
 * `opsgenie_configs` pointed at onceonly keep working, with the alias as the
 * incident `og:<alias>`. `Authorization: GenieKey <token>` is a tenant token.
 */
export function opsgenieAlertRoutes(app: FastifyInstance, opsgenie: OpsgenieIngest, history: HistorySource): void {
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
          responders: { ...responderList, description: 'teams, users, escalations or schedules: kept as the label `responders`' },
          visibleTo: { ...responderList, description: 'teams or users: kept as the label `visibleTo`' },
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

  app.get<{ Querystring: Record<string, unknown> }>(
    OPSGENIE_ALERTS,
    doc({
      summary: "Opsgenie's Alert API: list open alerts",
      description: `The caller's open \`og:\` alerts, as Opsgenie's list answers them (without details and description): sorted by \`sort\` in \`order\`, then \`offset\` and \`limit\`. \`query\` may only be \`status:open\`, as every alert onceonly holds is open; another is refused (422) rather than answered as if it matched everything. Read from the first ${OG_LISTED} live incidents the store finds.`,
      access: 'tenant',
      tag: 'drop-in',
      query: {
        query: { description: 'empty, or `status:open`', schema: { type: 'string' }, required: false },
        offset: { description: '0 to 20,000 (default 0)', schema: { type: 'integer' }, required: false },
        limit: { description: '1 to 100 (default 20)', schema: { type: 'integer' }, required: false },
        sort: { description: '`createdAt` (default), `updatedAt` or `count`', schema: { enum: ['createdAt', 'updatedAt', 'count'] }, required: false },
        order: { description: '`desc` (default) or `asc`', schema: { enum: ['asc', 'desc'] }, required: false },
      },
      responses: {
        200: listed("Opsgenie's answer: `data` the alerts, `took`, `requestId`"),
        422: refused,
      },
    }),
    async (req, reply) => {
      const q = parseListQuery(req.query);
      if (!q.ok) return unprocessable(req, reply, q.errors);
      return reply.code(200).send({ data: await opsgenie.list(req.tenant, q.value), took: took(reply), requestId: req.id });
    },
  );

  app.get<{ Params: { identifier: string }; Querystring: { identifierType?: string } }>(
    `${OPSGENIE_ALERTS}/:identifier`,
    doc({
      summary: "Opsgenie's Alert API: read an open alert",
      description:
        'The open alert `og:<alias>` by its alias (`identifierType=alias`) or by the `id` this answered (the default type; the id of an earlier episode finds nothing). What onceonly does not keep (`owner`, `teams`) is left out; `tinyId` is derived from the id; `responders` are as the create sent them; `details` are the details as label names.',
      access: 'tenant',
      tag: 'drop-in',
      params: { identifier: 'the alert’s alias or id, percent-encoded' },
      query: {
        identifierType: { description: '`id` (the default), `tiny` or `alias`', schema: { enum: ['id', 'alias', 'tiny'] }, required: false },
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
      const open = await openAlert(opsgenie, req, reply);
      if (!open) return reply;
      return reply.code(200).send({ data: alertView(open.ref.alias, open.rec), took: took(reply), requestId: req.id });
    },
  );

  opsgenieEditRoutes(app, opsgenie);
  opsgenieNoteRoutes(app, opsgenie, history);

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
        const named = namedIn(req);
        if (!named.ok) return unprocessable(req, reply, named.errors);
        const ref = await resolved(opsgenie, named.value, req, reply);
        if (ref === undefined) return reply;
        const origin = { requestId: req.id };
        if (ref) await (action === 'close' ? opsgenie.close(ref, req.tenant, origin) : opsgenie.acknowledge(ref, req.tenant, origin));
        return accepted(req, reply);
      },
    );
  }
}
