import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { OpsgenieIngest } from '../../engine/opsgenie.js';
import { namedIn, resolved } from './opsgenie-ref.js';
import {
  OG_EDITS,
  type OgEdit,
  parseDetailsAdd,
  parseDetailsRemove,
  parseOpsgenieEdit,
  parseResponderAdd,
  parseTagsAdd,
  parseTagsRemove,
} from '../../inputs/opsgenie/edits.js';
import type { OgParse } from '../../inputs/opsgenie/schema.js';
import { OG_PRIORITIES } from '../../inputs/opsgenie/schema.js';
import { doc, type RouteDoc } from '../openapi/route-doc.js';
import { accepted, identifierQuery, OPSGENIE_ALERTS, processing, refused, responderList, unprocessable } from './opsgenie-shape.js';

/** Every edit route, as the access rule and the error shape know them. */
export const OPSGENIE_EDIT_ROUTES = [...OG_EDITS, 'tags', 'details', 'responders'].map((what) => `${OPSGENIE_ALERTS}/:identifier/${what}`);

type EditRequest = FastifyRequest<{ Params: { identifier: string }; Querystring: { identifierType?: string; tags?: string; keys?: string } }>;

const NEVER_OPENS =
  'Never opens an alert: one with nothing open is answered as Opsgenie answers it, 202, and nothing changes; an edit that changes nothing sends nothing.';

/** Names the alert, parses the change, and makes it: 202 as Opsgenie answers, or 422 naming what is wrong. */
async function editRoute(opsgenie: OpsgenieIngest, req: EditRequest, reply: FastifyReply, parse: (req: EditRequest) => OgParse<OgEdit>) {
  const named = namedIn(req);
  if (!named.ok) return unprocessable(req, reply, named.errors);
  const edit = parse(req);
  if (!edit.ok) return unprocessable(req, reply, edit.errors);
  const ref = await resolved(opsgenie, named.value, req, reply);
  if (ref === undefined) return reply;
  if (ref === null) return accepted(req, reply);
  const outcome = await opsgenie.edit(ref, edit.value, req.tenant, { requestId: req.id });
  if (typeof outcome === 'object') return unprocessable(req, reply, outcome.refused);
  return accepted(req, reply);
}

const editDoc = (summary: string, description: string, extra: Pick<RouteDoc, 'body' | 'query'>) =>
  doc({
    summary: `Opsgenie's Alert API: ${summary}`,
    description: `${description} ${NEVER_OPENS}`,
    access: 'tenant',
    tag: 'drop-in',
    params: { identifier: 'the alert’s id or alias, percent-encoded' },
    query: { ...identifierQuery, ...extra.query },
    ...(extra.body ? { body: extra.body } : {}),
    responses: { 202: processing, 422: refused },
  });

/**
 * Opsgenie's edits of an open alert: `PUT …/message`, `…/description`,
 * `…/priority`; `POST` and `DELETE …/tags` and `…/details`. Each is an
 * UPDATE of the episode the call names, delivered to its adapters
 * (OpsgenieIngest.edit).
 */
export function opsgenieEditRoutes(app: FastifyInstance, opsgenie: OpsgenieIngest): void {
  const bodies = {
    message: { type: 'object', required: ['message'], properties: { message: { type: 'string', description: 'cut to 130 characters, as Opsgenie does' } } },
    description: { type: 'object', required: ['description'], properties: { description: { type: 'string', description: 'cut to 15,000 characters' } } },
    priority: { type: 'object', required: ['priority'], properties: { priority: { enum: [...OG_PRIORITIES] } } },
  } as const;
  for (const field of OG_EDITS) {
    app.put(
      `${OPSGENIE_ALERTS}/:identifier/${field}`,
      editDoc(
        `update an alert's ${field}`,
        `Changes the ${field} of the open incident \`og:<alias>\`, named by its alias or by the \`id\` a read answered (that episode only): an UPDATE delivered to its adapters${field === 'priority' ? ', its severity following the priority (P1 → CRITICAL … P4, P5 → INFO)' : ''}.`,
        { body: bodies[field] },
      ),
      (req: EditRequest, reply) => editRoute(opsgenie, req, reply, (r) => parseOpsgenieEdit(field, r.body)),
    );
  }
  const tagsBody = { type: 'object', required: ['tags'], properties: { tags: { type: 'array', maxItems: 20, items: { type: 'string', maxLength: 50 } } } };
  app.post(
    `${OPSGENIE_ALERTS}/:identifier/tags`,
    editDoc(
      'add tags to an alert',
      'Adds tags to the open incident `og:<alias>` (its `tags` label, comma-joined; at most 20 in all): an UPDATE delivered to its adapters.',
      {
        body: tagsBody,
      },
    ),
    (req: EditRequest, reply) => editRoute(opsgenie, req, reply, (r) => parseTagsAdd(r.body)),
  );
  app.delete(
    `${OPSGENIE_ALERTS}/:identifier/tags`,
    editDoc(
      'remove tags from an alert',
      'Removes the tags named in `tags` (comma-separated) from the open incident `og:<alias>`: an UPDATE delivered to its adapters.',
      {
        query: { tags: { description: 'the tags to remove, comma-separated', schema: { type: 'string' }, required: true } },
      },
    ),
    (req: EditRequest, reply) => editRoute(opsgenie, req, reply, (r) => parseTagsRemove(r.query.tags)),
  );
  app.post(
    `${OPSGENIE_ALERTS}/:identifier/details`,
    editDoc(
      'add details to an alert',
      'Adds details to the open incident `og:<alias>`, as labels under their label names (as a create’s details are): an UPDATE delivered to its adapters.',
      { body: { type: 'object', required: ['details'], properties: { details: { type: 'object', additionalProperties: { type: 'string' } } } } },
    ),
    (req: EditRequest, reply) => editRoute(opsgenie, req, reply, (r) => parseDetailsAdd(r.body)),
  );
  app.delete(
    `${OPSGENIE_ALERTS}/:identifier/details`,
    editDoc(
      'remove details from an alert',
      'Removes the details named in `keys` (comma-separated) from the open incident `og:<alias>`: an UPDATE delivered to its adapters.',
      {
        query: { keys: { description: 'the details to remove, by name, comma-separated', schema: { type: 'string' }, required: true } },
      },
    ),
    (req: EditRequest, reply) => editRoute(opsgenie, req, reply, (r) => parseDetailsRemove(r.query.keys)),
  );
  app.post(
    `${OPSGENIE_ALERTS}/:identifier/responders`,
    editDoc(
      'add a responder to an alert',
      'Adds a responder (`{type, id}`, `{type, name}` or a user’s `{type, username}`) to the open incident `og:<alias>`’s `responders` label (at most 50 in all; one it has already changes nothing): an UPDATE delivered to its adapters. onceonly notifies no one itself; its routes chose the adapters when the alert opened.',
      {
        body: {
          type: 'object',
          required: ['responder'],
          properties: { responder: responderList.items, user: { type: 'string' }, source: { type: 'string' }, note: { type: 'string' } },
        },
      },
    ),
    (req: EditRequest, reply) => editRoute(opsgenie, req, reply, (r) => parseResponderAdd(r.body)),
  );
}
