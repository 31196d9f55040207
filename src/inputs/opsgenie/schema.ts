import { LABEL_NAME, RESERVED_LABELS } from '../../core/matcher.js';
import { carriedProblem, MAX_LABEL_NAME, MAX_LABEL_VALUE, MAX_LABELS, textProblem } from '../limits.js';
import { cut, isObject, type OgParse } from './parse.js';
import { type OgResponder, parseResponders, respondersLabel } from './responders.js';

/**
 * Opsgenie's Alert API (`POST /v2/alerts`), as Opsgenie documents its
 * fields: `message` is required; `alias` (at most 512 characters) is the
 * identity and defaults to the message; `priority` is P1…P5, P3 by default;
 * at most 20 `tags` of 50 characters; `details` a map of strings; `entity`
 * 512, `source` 100, `description` 15,000 characters. Opsgenie cuts a longer
 * message or description rather than refuse it (Alertmanager sends a message
 * cut to 130 runes itself), and so does this. `responders` and `visibleTo`
 * are kept as labels (responders.ts). Fields it accepts that do nothing here
 * (actions, user, note) are ignored.
 * Problems are Opsgenie's map of field → message.
 */
export const OG_PRIORITIES = ['P1', 'P2', 'P3', 'P4', 'P5'] as const;
export type OgPriority = (typeof OG_PRIORITIES)[number];

export const MAX_ALIAS = 512;
export const MAX_MESSAGE = 130;
export const MAX_DESCRIPTION = 15_000;
export const MAX_TAGS = 20;
export const MAX_TAG = 50;
const MAX_ENTITY = 512;
const MAX_SOURCE = 100;

export interface OgAlert {
  message: string;
  alias: string;
  priority: OgPriority;
  description?: string;
  tags: string[];
  details: Record<string, string>;
  entity?: string;
  source?: string;
  responders: OgResponder[];
  visibleTo: OgResponder[];
}

export { cut, isObject, type OgParse } from './parse.js';

export function parseOpsgenieAlert(body: unknown): OgParse<OgAlert> {
  if (!isObject(body)) return { ok: false, errors: { body: 'Request body must be a JSON object.' } };
  const errors: Record<string, string> = {};
  const text = (field: string, max: number | null, freeText: boolean): string | undefined => {
    const v = body[field];
    if (v === undefined || v === null) return undefined;
    if (typeof v !== 'string') {
      errors[field] = `${field} must be a string.`;
      return undefined;
    }
    const problem = textProblem(v, freeText);
    if (problem) errors[field] = `${field} ${problem}.`;
    else if (max !== null && v.length > max) errors[field] = `${field} must be at most ${max} characters.`;
    return v;
  };
  const message = text('message', null, false);
  if (message === undefined || (errors.message === undefined && message.trim() === '')) errors.message ??= 'Message can not be empty.';
  const alias = text('alias', MAX_ALIAS, false);
  if (alias !== undefined && errors.alias === undefined && alias.trim() === '') errors.alias = 'Alias can not be blank when given.';
  const description = text('description', null, true);
  const entity = text('entity', MAX_ENTITY, false);
  const source = text('source', MAX_SOURCE, false);
  const priority = body.priority ?? 'P3';
  if (!OG_PRIORITIES.includes(priority as OgPriority)) errors.priority = `Priority should be one of ${OG_PRIORITIES.join(', ')}.`;

  const tags: string[] = [];
  if (body.tags !== undefined && body.tags !== null) {
    if (!Array.isArray(body.tags) || body.tags.some((t) => typeof t !== 'string')) errors.tags = 'Tags must be a list of strings.';
    else if (body.tags.length > MAX_TAGS) errors.tags = `At most ${MAX_TAGS} tags (this alert has ${body.tags.length}).`;
    else {
      const problem = (body.tags as string[]).map((t) => (t.length > MAX_TAG ? `must be at most ${MAX_TAG} characters` : textProblem(t))).find(Boolean);
      if (problem) errors.tags = `Each tag ${problem}.`;
      else tags.push(...new Set((body.tags as string[]).filter((t) => t.trim() !== '')));
    }
  }

  const details: Record<string, string> = {};
  if (body.details !== undefined && body.details !== null) {
    const d = body.details;
    if (!isObject(d) || Object.values(d).some((v) => typeof v !== 'string')) errors.details = 'Details must be a map of strings.';
    else if (Object.keys(d).length > MAX_LABELS) errors.details = `At most ${MAX_LABELS} details (this alert has ${Object.keys(d).length}).`;
    else {
      const problem =
        carriedProblem(d) ??
        (Object.values(d).some((v) => (v as string).length > MAX_LABEL_VALUE) ? `values must be at most ${MAX_LABEL_VALUE} characters` : null);
      const clash = problem ?? detailsClash(Object.keys(d));
      if (clash) errors.details = `Details ${clash}.`;
      else Object.assign(details, d);
    }
  }

  const responders = parseResponders('responders', body.responders);
  const visibleTo = parseResponders('visibleTo', body.visibleTo);
  for (const r of [responders, visibleTo]) if (!r.ok) Object.assign(errors, r.errors);

  if (Object.keys(errors).length > 0 || !responders.ok || !visibleTo.ok) return { ok: false, errors };
  return {
    ok: true,
    value: {
      message: cut(message!, MAX_MESSAGE),
      // Opsgenie's default: an alert without an alias is deduplicated by its message (as cut: a key stays bounded).
      alias: alias ?? cut(message!, MAX_MESSAGE),
      priority: priority as OgPriority,
      ...(description !== undefined ? { description: cut(description, MAX_DESCRIPTION) } : {}),
      tags,
      details,
      ...(entity !== undefined && entity !== '' ? { entity } : {}),
      ...(source !== undefined && source !== '' ? { source } : {}),
      responders: responders.value,
      visibleTo: visibleTo.value,
    },
  };
}

/**
 * `{identifier}` with `identifierType=alias`, Opsgenie's way to name an alert
 * its sender made. Opsgenie's default type is its own alert id, which only
 * Opsgenie hands out: refused, naming the parameter to send.
 */
export function parseAliasIdentifier(identifier: string, identifierType: unknown): OgParse<string> {
  if (identifierType !== 'alias')
    return {
      ok: false,
      errors: {
        identifierType: `identifierType must be alias (given: ${identifierType === undefined ? 'none, which means id' : JSON.stringify(String(identifierType).slice(0, 20))}): onceonly knows an alert by the alias its sender gave.`,
      },
    };
  const problem =
    identifier.length > MAX_ALIAS ? `must be at most ${MAX_ALIAS} characters` : identifier.trim() === '' ? 'must not be blank' : textProblem(identifier);
  return problem ? { ok: false, errors: { identifier: `The alias ${problem}.` } } : { ok: true, value: identifier };
}

/** A detail's name as a label name: a character outside `[A-Za-z0-9_]` becomes `_`, a leading digit gets a `_`, cut to 256. */
export function detailLabel(name: string): string {
  let label = name.replace(/[^A-Za-z0-9_]/g, '_');
  if (!LABEL_NAME.test(label)) label = `_${label}`;
  return label.slice(0, MAX_LABEL_NAME);
}

/**
 * Label names a detail may not take: the alert's own fields and those
 * onceonly sets itself, which a detail of that name would otherwise be
 * silently dropped for. `severity` is not among them: Alertmanager's
 * opsgenie_configs sends an alert's labels as details, and its `severity` is
 * the severity as sent, which routes match (onceonly's is `oo_severity`).
 */
const RESERVED_DETAIL_LABELS = new Set([
  'alias',
  'message',
  'description',
  'priority',
  'tags',
  'entity',
  'source',
  'responders',
  'visibleTo',
  ...RESERVED_LABELS,
]);

/** Why details cannot be labels as given (one takes a reserved name, or two make one name), or null. */
export function detailsClash(names: readonly string[]): string | null {
  const seen = new Map<string, string>();
  for (const name of names) {
    const label = detailLabel(name);
    if (RESERVED_DETAIL_LABELS.has(label))
      return `may not be named ${JSON.stringify(name)}: as a label it would stand for the alert's own ${label} (rename the detail)`;
    const other = seen.get(label);
    if (other !== undefined) return `${JSON.stringify(other)} and ${JSON.stringify(name)} both become the label ${label}: rename one`;
    seen.set(label, name);
  }
  return null;
}

/**
 * An alert's labels, which routes, silences and inhibition match: its details
 * under names made label names (a character outside `[A-Za-z0-9_]` becomes
 * `_`, a leading digit gets a `_`, cut to 256 characters; of two details
 * that make one name, the first in code-point order), then `tags` (comma-joined), `entity`,
 * `source`, `priority`, `responders` and `visibleTo`, which a detail may not be named. At most
 * the input limits' label count: a detail past it stays in the delivery, not
 * in the labels.
 */
export function opsgenieLabels(a: OgAlert): Record<string, string> {
  const labels: Record<string, string> = {};
  for (const [name, value] of Object.entries(a.details).sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0))) {
    const label = detailLabel(name);
    if (!(label in labels)) labels[label] = value;
  }
  const fixed: Record<string, string> = {
    priority: a.priority,
    ...(a.tags.length > 0 ? { tags: a.tags.join(',') } : {}),
    ...(a.entity !== undefined ? { entity: a.entity } : {}),
    ...(a.source !== undefined ? { source: a.source } : {}),
    ...(a.responders.length > 0 ? { responders: respondersLabel(a.responders) } : {}),
    ...(a.visibleTo.length > 0 ? { visibleTo: respondersLabel(a.visibleTo) } : {}),
  };
  const names = Object.keys(labels).filter((n) => !(n in fixed));
  const room = MAX_LABELS - Object.keys(fixed).length;
  return { ...Object.fromEntries(names.slice(0, room).map((n) => [n, labels[n]!])), ...fixed };
}
