import type { FastifyReply, FastifyRequest } from 'fastify';
import type { OpsgenieIngest } from '../../engine/opsgenie.js';
import { type OgAlertRef, type OgNamed, parseAlertRef } from '../../inputs/opsgenie/alert-id.js';
import type { OgParse } from '../../inputs/opsgenie/parse.js';
import type { IncidentRecord } from '../../store/contract/index.js';
import { took, unprocessable } from './opsgenie-shape.js';

type Named = FastifyRequest<{ Params: { identifier: string }; Querystring: { identifierType?: string } }>;

/** `{identifier}` and `identifierType` checked, before the body and before any read of the store. */
export const namedIn = (req: Named): OgParse<OgNamed> => parseAlertRef(req.params.identifier, req.query.identifierType);

/**
 * The alert a call names, a tiny id looked up (OpsgenieIngest.resolve): the
 * ref, or null when a tiny id names no open alert (answered as an alias with
 * nothing open is), or undefined once a refusal was sent (422 naming
 * `identifier`).
 */
export async function resolved(opsgenie: OpsgenieIngest, named: OgNamed, req: FastifyRequest, reply: FastifyReply): Promise<OgAlertRef | null | undefined> {
  const r = await opsgenie.resolve(named, req.tenant);
  if (r.ok) return r.value;
  unprocessable(req, reply, r.errors);
  return undefined;
}

/** A read's alert: named, resolved and open, with its record; undefined once a 422 or Opsgenie's 404 was sent. */
export async function openAlert(opsgenie: OpsgenieIngest, req: Named, reply: FastifyReply): Promise<{ ref: OgAlertRef; rec: IncidentRecord } | undefined> {
  const named = namedIn(req);
  if (!named.ok) {
    unprocessable(req, reply, named.errors);
    return undefined;
  }
  const ref = await resolved(opsgenie, named.value, req, reply);
  if (ref === undefined) return undefined;
  const rec = ref && (await opsgenie.get(ref, req.tenant));
  if (!ref || !rec) {
    reply.code(404).send({ message: 'Alert does not exist', took: took(reply), requestId: req.id });
    return undefined;
  }
  return { ref, rec };
}
