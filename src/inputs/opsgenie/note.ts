import { textProblem } from '../limits.js';
import { isObject, type OgParse } from './parse.js';

/**
 * The body of Opsgenie's `POST /v2/alerts/{identifier}/notes`: `note`
 * (required, at most 25,000 characters, free text), `user` and `source`
 * (at most 100 each), as Opsgenie takes them. Errors by field.
 */
export interface OgNote {
  note: string;
  user?: string;
  source?: string;
}

export const MAX_NOTE = 25_000;
const MAX_NOTE_BY = 100;

export function parseOpsgenieNote(body: unknown): OgParse<OgNote> {
  if (!isObject(body)) return { ok: false, errors: { body: 'Request body must be a JSON object.' } };
  const errors: Record<string, string> = {};
  const text = (field: 'note' | 'user' | 'source', max: number, freeText: boolean): string | undefined => {
    const v = body[field];
    if (v === undefined || v === null) return undefined;
    if (typeof v !== 'string') {
      errors[field] = `${field} must be a string.`;
      return undefined;
    }
    const problem = v.length > max ? `must be at most ${max} characters` : textProblem(v, freeText);
    if (problem) errors[field] = `${field} ${problem}.`;
    return v;
  };
  const note = text('note', MAX_NOTE, true);
  if (errors.note === undefined && (note === undefined || note.trim() === '')) errors.note = 'Note can not be empty.';
  const user = text('user', MAX_NOTE_BY, false);
  const source = text('source', MAX_NOTE_BY, false);
  if (Object.keys(errors).length > 0) return { ok: false, errors };
  return { ok: true, value: { note: note!, ...(user ? { user } : {}), ...(source ? { source } : {}) } };
}
