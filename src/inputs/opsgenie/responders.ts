import { MAX_LABEL_VALUE, textProblem } from '../limits.js';
import { isObject, type OgParse } from './parse.js';

/**
 * Opsgenie's `responders` and `visibleTo` on a create: whom the alert
 * notifies, and who may see it. onceonly does not notify people itself (its
 * routes decide where a ticket goes), so it keeps them as labels that routes,
 * silences and templates match, and answers them on a read as they were
 * sent. Each is `{type, id}` or `{type, name}` (a user's `username`), as
 * Opsgenie takes it; `responders` are teams, users, escalations or schedules,
 * `visibleTo` teams and users. As a label each is `<type>:<name>` (a team or
 * user named) or `<type>#<id>` (one given by id), comma-joined in the order
 * sent: `responders=~".*(^|,)team:noc(,|$).*"` routes what pages the NOC.
 */
export interface OgResponder {
  type: string;
  id?: string;
  name?: string;
  username?: string;
}

const RESPONDER_TYPES = ['team', 'user', 'escalation', 'schedule'] as const;
const VISIBLE_TYPES = ['team', 'user'] as const;
/** Responders (or visibleTo entries) one alert keeps at most: Opsgenie's own bound. */
export const MAX_RESPONDERS = 50;
/** Characters of one id, name or username. */
const MAX_RESPONDER_NAME = 100;

export const RESPONDER_FIELDS = { responders: 'responders', visibleTo: 'visibleTo' } as const;
export type ResponderField = keyof typeof RESPONDER_FIELDS;

/** One field's entries, checked; errors by field as Opsgenie names them. */
export function parseResponders(field: ResponderField, value: unknown): OgParse<OgResponder[]> {
  const fail = (why: string): OgParse<OgResponder[]> => ({ ok: false, errors: { [field]: why } });
  if (value === undefined || value === null) return { ok: true, value: [] };
  if (!Array.isArray(value)) return fail(`${field} must be a list of objects with a type and an id or name.`);
  if (value.length > MAX_RESPONDERS) return fail(`At most ${MAX_RESPONDERS} ${field} (this alert has ${value.length}).`);
  const types: readonly string[] = field === 'responders' ? RESPONDER_TYPES : VISIBLE_TYPES;
  const out: OgResponder[] = [];
  for (const [i, r] of value.entries()) {
    if (!isObject(r)) return fail(`${field}[${i}] must be an object with a type and an id or name.`);
    if (typeof r.type !== 'string' || !types.includes(r.type)) return fail(`${field}[${i}].type should be one of ${types.join(', ')}.`);
    const given = (['id', 'name', 'username'] as const).filter((k) => r[k] !== undefined && r[k] !== null);
    if (given.length === 0) return fail(`${field}[${i}] needs an id or ${r.type === 'user' ? 'a username' : 'a name'}.`);
    const entry: OgResponder = { type: r.type };
    for (const k of given) {
      const v = r[k];
      if (typeof v !== 'string' || v.trim() === '') return fail(`${field}[${i}].${k} must be a non-blank string.`);
      const problem = v.length > MAX_RESPONDER_NAME ? `must be at most ${MAX_RESPONDER_NAME} characters` : textProblem(v);
      if (problem) return fail(`${field}[${i}].${k} ${problem}.`);
      // A comma would split the label onceonly keeps them in: refused, not split silently.
      if (v.includes(',')) return fail(`${field}[${i}].${k} must not contain a comma (onceonly keeps ${field} as one comma-joined label).`);
      entry[k] = v;
    }
    out.push(entry);
  }
  if (respondersLabel(out).length > MAX_LABEL_VALUE) return fail(`${field} make a label of more than ${MAX_LABEL_VALUE} characters: name fewer, or shorter.`);
  return { ok: true, value: out };
}

/** The label value: `<type>:<name>` or `<type>#<id>`, comma-joined; a name wins over an id when both are given. */
export function respondersLabel(rs: readonly OgResponder[]): string {
  return rs.map((r) => ((r.name ?? r.username) !== undefined ? `${r.type}:${r.name ?? r.username}` : `${r.type}#${r.id}`)).join(',');
}

/** The label read back as Opsgenie answers responders: `{type, id}`, `{type, name}` or a user's `{type, username}`. */
export function respondersOf(label: string | undefined): OgResponder[] {
  if (!label) return [];
  return label.split(',').map((part) => {
    const named = /^([a-z]+):(.*)$/.exec(part);
    if (named) return named[1] === 'user' ? { type: 'user', username: named[2]! } : { type: named[1]!, name: named[2]! };
    const [type, id] = part.split('#') as [string, string | undefined];
    return { type, id: id ?? '' };
  });
}
