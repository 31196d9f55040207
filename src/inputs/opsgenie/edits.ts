import { carriedProblem, MAX_LABEL_VALUE, MAX_LABELS, textProblem } from '../limits.js';
import {
  cut,
  detailLabel,
  detailsClash,
  isObject,
  MAX_DESCRIPTION,
  MAX_MESSAGE,
  MAX_TAG,
  MAX_TAGS,
  OG_PRIORITIES,
  type OgParse,
  type OgPriority,
} from './schema.js';
import { MAX_RESPONDERS, type OgResponder, parseResponders, respondersLabel, respondersOf } from './responders.js';

/**
 * Opsgenie's edits of an open alert, as its Alert API takes them: `PUT
 * /v2/alerts/{identifier}/message`, `/description` and `/priority`; `POST`
 * and `DELETE …/tags` and `…/details`; `POST …/responders`. Each is parsed here into one change,
 * which `applyEdit` makes to what the alert shows.
 */

/** The fields `PUT /v2/alerts/{identifier}/<field>` sets. */
export const OG_EDITS = ['message', 'description', 'priority'] as const;
export type OgEditField = (typeof OG_EDITS)[number];

export type OgEdit =
  | { message: string }
  | { description: string }
  | { priority: OgPriority }
  | { addTags: string[] }
  | { removeTags: string[] }
  | { addDetails: Record<string, string> }
  | { removeDetails: string[] }
  | { addResponder: OgResponder };

/** What an Opsgenie alert shows, which an edit changes: its message, description, and labels (details, tags, priority…). */
export interface OgShown {
  summary: string;
  description?: string;
  labels: Record<string, string>;
}

const refuse = (field: string, message: string): { ok: false; errors: Record<string, string> } => ({ ok: false, errors: { [field]: message } });

/**
 * A `PUT` edit's body: the one field the path names, required; a message or
 * description cut as a create's are, never blank; a priority one of P1…P5.
 * Other fields (`user`, `source`) are ignored.
 */
export function parseOpsgenieEdit(field: OgEditField, body: unknown): OgParse<OgEdit> {
  if (!isObject(body)) return refuse('body', 'Request body must be a JSON object.');
  const v = body[field];
  if (field === 'priority') {
    return OG_PRIORITIES.includes(v as OgPriority)
      ? { ok: true, value: { priority: v as OgPriority } }
      : refuse('priority', `Priority should be one of ${OG_PRIORITIES.join(', ')}.`);
  }
  const name = field === 'message' ? 'Message' : 'Description';
  if (typeof v !== 'string') return refuse(field, `${name} must be a string.`);
  const problem = textProblem(v, field === 'description');
  if (problem) return refuse(field, `${field} ${problem}.`);
  if (v.trim() === '') return refuse(field, `${name} can not be empty.`);
  return field === 'message' ? { ok: true, value: { message: cut(v, MAX_MESSAGE) } } : { ok: true, value: { description: cut(v, MAX_DESCRIPTION) } };
}

/** Tags as Opsgenie takes them: at most 20, each 1…50 characters of text. */
function tagsOf(v: unknown): OgParse<string[]> {
  if (!Array.isArray(v) || v.length === 0 || v.some((t) => typeof t !== 'string')) return refuse('tags', 'Tags must be a non-empty list of strings.');
  if (v.length > MAX_TAGS) return refuse('tags', `At most ${MAX_TAGS} tags (given ${v.length}).`);
  const problem = (v as string[])
    .map((t) => (t.trim() === '' ? 'must not be blank' : t.length > MAX_TAG ? `must be at most ${MAX_TAG} characters` : textProblem(t)))
    .find(Boolean);
  return problem ? refuse('tags', `Each tag ${problem}.`) : { ok: true, value: [...new Set(v as string[])] };
}

/** A comma-separated list in the query (`?tags=a,b`, `?keys=k1,k2`), as Opsgenie's removals take it. */
function listOf(field: string, v: unknown): OgParse<string[]> {
  if (typeof v !== 'string' || v.trim() === '') return refuse(field, `${field} must be given in the query, comma-separated.`);
  const items = v
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (items.length > MAX_LABELS) return refuse(field, `At most ${MAX_LABELS} ${field} at once (given ${items.length}).`);
  const problem = items.map((t) => (t.length > MAX_LABEL_VALUE ? `must be at most ${MAX_LABEL_VALUE} characters` : textProblem(t))).find(Boolean);
  return problem ? refuse(field, `Each of ${field} ${problem}.`) : { ok: true, value: [...new Set(items)] };
}

/** `POST …/tags` `{"tags": [...]}`: tags to add. */
export function parseTagsAdd(body: unknown): OgParse<OgEdit> {
  if (!isObject(body)) return refuse('body', 'Request body must be a JSON object.');
  const tags = tagsOf(body.tags);
  return tags.ok ? { ok: true, value: { addTags: tags.value } } : tags;
}

/** `DELETE …/tags?tags=a,b`: tags to remove. */
export function parseTagsRemove(tags: unknown): OgParse<OgEdit> {
  const list = listOf('tags', tags);
  return list.ok ? { ok: true, value: { removeTags: list.value } } : list;
}

/** `POST …/details` `{"details": {...}}`: details to add, under their label names (as a create's). */
export function parseDetailsAdd(body: unknown): OgParse<OgEdit> {
  if (!isObject(body)) return refuse('body', 'Request body must be a JSON object.');
  const d = body.details;
  if (!isObject(d) || Object.keys(d).length === 0 || Object.values(d).some((v) => typeof v !== 'string'))
    return refuse('details', 'Details must be a non-empty map of strings.');
  if (Object.keys(d).length > MAX_LABELS) return refuse('details', `At most ${MAX_LABELS} details (given ${Object.keys(d).length}).`);
  const problem =
    carriedProblem(d) ??
    (Object.values(d).some((v) => (v as string).length > MAX_LABEL_VALUE) ? `values must be at most ${MAX_LABEL_VALUE} characters` : null) ??
    detailsClash(Object.keys(d));
  if (problem) return refuse('details', `Details ${problem}.`);
  return { ok: true, value: { addDetails: Object.fromEntries(Object.entries(d).map(([k, v]) => [detailLabel(k), v as string])) } };
}

/** `DELETE …/details?keys=k1,k2`: details to remove, by the names they were given (their label names are removed). */
export function parseDetailsRemove(keys: unknown): OgParse<OgEdit> {
  const list = listOf('keys', keys);
  if (!list.ok) return list;
  const clash = detailsClash(list.value);
  return clash ? refuse('keys', `Keys ${clash}.`) : { ok: true, value: { removeDetails: list.value.map(detailLabel) } };
}

/** `POST …/responders` `{"responder": {"type", "id" | "name" | "username"}}`: one responder to add (its `responders` label). */
export function parseResponderAdd(body: unknown): OgParse<OgEdit> {
  if (!isObject(body)) return refuse('body', 'Request body must be a JSON object.');
  if (body.responder === undefined || body.responder === null) return refuse('responder', 'A responder (type and id or name) is required.');
  const r = parseResponders('responders', [body.responder]);
  if (!r.ok) return refuse('responder', Object.values(r.errors)[0]!.replace(/^responders\[0\]/, 'responder'));
  return { ok: true, value: { addResponder: r.value[0]! } };
}

/**
 * What the alert shows after the edit, or what keeps it from being made (too
 * many tags or labels, checked against what the alert holds now).
 */
export function applyEdit(shown: OgShown, edit: OgEdit): OgParse<OgShown> {
  const labels = { ...shown.labels };
  const tags = labels.tags ? labels.tags.split(',') : [];
  if ('message' in edit) return { ok: true, value: { ...shown, summary: edit.message } };
  if ('description' in edit) return { ok: true, value: { ...shown, description: edit.description } };
  if ('priority' in edit) labels.priority = edit.priority;
  else if ('addTags' in edit) {
    const all = [...tags, ...edit.addTags.filter((t) => !tags.includes(t))];
    if (all.length > MAX_TAGS) return refuse('tags', `At most ${MAX_TAGS} tags: the alert would have ${all.length}.`);
    labels.tags = all.join(',');
  } else if ('removeTags' in edit) {
    const kept = tags.filter((t) => !edit.removeTags.includes(t));
    if (kept.length > 0) labels.tags = kept.join(',');
    else delete labels.tags;
  } else if ('addDetails' in edit) {
    Object.assign(labels, edit.addDetails);
    if (Object.keys(labels).length > MAX_LABELS) return refuse('details', `At most ${MAX_LABELS} labels: the alert would have ${Object.keys(labels).length}.`);
  } else if ('addResponder' in edit) {
    const all = respondersOf(labels.responders);
    const label = respondersLabel([edit.addResponder]);
    if (!respondersLabel(all).split(',').includes(label)) all.push(edit.addResponder);
    if (all.length > MAX_RESPONDERS) return refuse('responder', `At most ${MAX_RESPONDERS} responders: the alert would have ${all.length}.`);
    if (respondersLabel(all).length > MAX_LABEL_VALUE)
      return refuse('responder', `The responders would make a label of more than ${MAX_LABEL_VALUE} characters.`);
    labels.responders = respondersLabel(all);
  } else for (const label of edit.removeDetails) delete labels[label];
  return { ok: true, value: { ...shown, labels } };
}

/** Whether two states of an alert show the same: an edit that changes nothing sends nothing. */
export function sameShown(a: OgShown, b: OgShown): boolean {
  const sorted = (l: Record<string, string>) => JSON.stringify(Object.entries(l).sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0)));
  return a.summary === b.summary && a.description === b.description && sorted(a.labels) === sorted(b.labels);
}
