import type { FastifyInstance } from 'fastify';
import { opsgenieKey, type OpsgenieIngest } from '../../engine/opsgenie.js';
import { namedIn, openAlert, resolved } from './opsgenie-ref.js';
import { MAX_NOTE, parseOpsgenieNote } from '../../inputs/opsgenie/note.js';
import { doc } from '../openapi/route-doc.js';
import type { HistorySource } from './history.js';
import { accepted, identifierQuery, listed, OPSGENIE_ALERTS, processing, refused, took, unprocessable } from './opsgenie-shape.js';

export const OPSGENIE_NOTE_ROUTE = `${OPSGENIE_ALERTS}/:identifier/notes`;

/** Notes one list answers at most, newest first (Opsgenie's default and bound). */
const NOTES_LISTED = 100;

type NoteRequest = { Params: { identifier: string }; Querystring: { identifierType?: string } };

/**
 * Opsgenie's notes on an alert: a note is an event in the alert's key
 * history (`type: note`), beside its decisions and deliveries, where
 * `explain`, the dashboard and a later `GET …/notes` find it. It changes no
 * decision and is not sent to the alert's receivers. Kept with the history's
 * bounds (`history.max_events`, `retention_seconds`, the tenant's bytes).
 */
export function opsgenieNoteRoutes(app: FastifyInstance, opsgenie: OpsgenieIngest, history: HistorySource): void {
  app.post<NoteRequest>(
    OPSGENIE_NOTE_ROUTE,
    doc({
      summary: "Opsgenie's Alert API: add a note to an alert",
      description: `Adds a note to the open incident \`og:<alias>\`, named by its alias or by the \`id\` a read answered (that episode only): an event \`note\` in its history, with \`user\` and \`source\`. It changes no decision and is not delivered. An alert with nothing open is answered as Opsgenie answers it, 202, and nothing is kept; with history off (\`history.max_events: 0\`) a note cannot be kept and is refused (422).`,
      access: 'tenant',
      tag: 'drop-in',
      params: { identifier: 'the alert’s id or alias, percent-encoded' },
      query: identifierQuery,
      body: {
        type: 'object',
        required: ['note'],
        properties: { note: { type: 'string', maxLength: MAX_NOTE }, user: { type: 'string', maxLength: 100 }, source: { type: 'string', maxLength: 100 } },
      },
      responses: { 202: processing, 422: refused },
    }),
    async (req, reply) => {
      const named = namedIn(req);
      if (!named.ok) return unprocessable(req, reply, named.errors);
      const note = parseOpsgenieNote(req.body);
      if (!note.ok) return unprocessable(req, reply, note.errors);
      if (!history.recorder.on) return unprocessable(req, reply, { note: 'Notes are kept in the alert’s history, which is off here (history.max_events: 0).' });
      const ref = await resolved(opsgenie, named.value, req, reply);
      if (ref === undefined) return reply;
      const rec = ref && (await opsgenie.get(ref, req.tenant));
      // The episode it belongs to, as the store names it: the list of a later episode leaves it out without comparing clocks.
      if (ref && rec) history.recorder.record(req.tenant, opsgenieKey(ref.alias), { type: 'note', via: 'opsgenie', ...note.value, episode: rec.createdAt });
      return accepted(req, reply);
    },
  );

  app.get<NoteRequest>(
    OPSGENIE_NOTE_ROUTE,
    doc({
      summary: "Opsgenie's Alert API: list an alert's notes",
      description: `The notes of the open incident \`og:<alias>\`'s episode, newest first, as Opsgenie lists them (\`note\`, \`owner\`, \`createdAt\`, \`offset\`): at most ${NOTES_LISTED}, those its history still holds.`,
      access: 'tenant',
      tag: 'drop-in',
      params: { identifier: 'the alert’s id or alias, percent-encoded' },
      query: identifierQuery,
      responses: {
        200: listed("Opsgenie's answer: `data` the notes, `paging`, `took`, `requestId`"),
        404: refused,
        422: refused,
      },
    }),
    async (req, reply) => {
      const open = await openAlert(opsgenie, req, reply);
      if (!open) return reply;
      const { ref, rec } = open;
      await history.recorder.flush();
      const events = await history.store.read(req.tenant, opsgenieKey(ref.alias));
      // This episode's notes only: a closed episode's notes belong to that alert, as at Opsgenie.
      const notes = events
        .filter((e) => e.type === 'note' && e.episode === rec.createdAt)
        .reverse()
        .slice(0, NOTES_LISTED)
        .map((e) => ({ note: String(e.note), owner: String(e.user ?? ''), createdAt: new Date(e.at).toISOString(), offset: String(e.at) }));
      return reply.code(200).send({ data: notes, paging: {}, took: took(reply), requestId: req.id });
    },
  );
}
