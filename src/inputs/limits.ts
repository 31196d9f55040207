import { z } from 'zod';
import { LABEL_NAME } from '../core/matcher.js';

/**
 * The input limits every route shares, in one place: what text may hold, and
 * how deep and large the objects carried along (details, custom_details,
 * labels, annotations) may be. A value outside them is a 400 naming the field.
 */

/** Objects carried along: at most this many levels deep… */
export const MAX_DEPTH = 32;
/** …and this many bytes as JSON. */
export const MAX_CARRIED_BYTES = 64 * 1024;
/** A summary: as PagerDuty's own limit. */
export const MAX_SUMMARY = 1024;
/** An Alertmanager label or annotation name. */
export const MAX_LABEL_NAME = 256;
/** An Alertmanager label value: labels are identity, so they hold no control characters. */
export const MAX_LABEL_VALUE = 4096;
/** Labels an incident may carry: each is matched by routes, silences and inhibition, and sent with every change. */
export const MAX_LABELS = 64;

/** C0 controls and DEL; free text may keep tab, line feed and carriage return. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point.
const CONTROL = /[\u0000-\u001f\u007f]/;
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point.
const CONTROL_BUT_WHITESPACE = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/;
/** A high surrogate not followed by a low one, or a low one not preceded by a high one. */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/**
 * What identity text (keys, identity fields, label names and values) also
 * refuses: C1 controls (U+0080–U+009F, read as escape sequences by some
 * terminals) and the characters that reorder or break a line as shown
 * (bidirectional marks, embeddings, overrides and isolates; line and
 * paragraph separators). A key that reads as another in a listing, a
 * ticket or a terminal is a key a person can be fooled by.
 */
const IDENTITY_FORMAT = /[\u0080-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;

/** Why `s` is not acceptable text (a control character or a lone surrogate), or null. */
export function textProblem(s: string, freeText = false): string | null {
  if ((freeText ? CONTROL_BUT_WHITESPACE : CONTROL).test(s))
    return freeText ? 'must not contain control characters other than tab and line breaks' : 'must not contain control characters';
  if (!freeText && IDENTITY_FORMAT.test(s)) return 'must not contain C1 control characters, bidirectional controls or line separators';
  if (LONE_SURROGATE.test(s)) return 'must be well-formed Unicode (no lone surrogates)';
  return null;
}

/** An identity field or key: 1..max characters, no control characters, well-formed. */
export const identityText = (max: number) =>
  z
    .string()
    .min(1, 'must not be empty')
    .max(max, `must be at most ${max} characters`)
    .superRefine((s, ctx) => {
      const problem = textProblem(s);
      if (problem) ctx.addIssue({ code: 'custom', message: problem });
    });

/** Text up to `max` characters that may be empty (a label value), with no control characters. */
export const boundedText = (max: number) =>
  z
    .string()
    .max(max, `must be at most ${max} characters`)
    .superRefine((s, ctx) => {
      const problem = textProblem(s);
      if (problem) ctx.addIssue({ code: 'custom', message: problem });
    });

/**
 * An incident's labels: at most 64, names as Prometheus and Alertmanager
 * write them (`[A-Za-z_][A-Za-z0-9_]*`, at most 256 characters), values
 * strings of at most 4,096 characters with no control characters. (What a
 * body of many labels costs to check is bounded by the body's own size limit.)
 */
export const labelSet = z.record(z.string(), boundedText(MAX_LABEL_VALUE)).check((ctx) => {
  const names = Object.keys(ctx.value);
  const problem =
    names.length > MAX_LABELS ? `must hold at most ${MAX_LABELS} labels (holds ${names.length})` : names.map(labelNameProblem).find((p) => p !== null);
  if (problem) ctx.issues.push({ code: 'custom', message: problem, input: ctx.value });
});

/** Why `name` is not a label name, quoting at most its first 64 characters; null when it is one. */
function labelNameProblem(name: string): string | null {
  if (name.length > MAX_LABEL_NAME) return `a label name must be at most ${MAX_LABEL_NAME} characters (one is ${name.length})`;
  if (LABEL_NAME.test(name)) return null;
  const shown = JSON.stringify(name.length > 64 ? `${name.slice(0, 64)}…` : name);
  return `the label name ${shown} is not one: a letter or _, then letters, digits or _`;
}

/** Free text (a summary): tab and line breaks allowed. */
export const freeText = (max: number, min = 0) =>
  z
    .string()
    .min(min, 'must not be empty')
    .max(max, `must be at most ${max} characters`)
    .superRefine((s, ctx) => {
      const problem = textProblem(s, true);
      if (problem) ctx.addIssue({ code: 'custom', message: problem });
    });

/**
 * Why a carried object is refused, or null: too deep, too large, or holding
 * text that is not acceptable. Walked with an explicit stack, never by
 * recursion, and stopped at the first level past the limit, so a body nested
 * 100,000 deep costs a few dozen steps and cannot overflow the stack.
 */
export function carriedProblem(value: unknown): string | null {
  const stack: Array<[unknown, number]> = [[value, 1]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (typeof v === 'string') {
      const problem = textProblem(v, true);
      if (problem) return `holds text that ${problem}`;
      continue;
    }
    if (typeof v !== 'object' || v === null) continue;
    if (depth > MAX_DEPTH) return `must be at most ${MAX_DEPTH} levels deep`;
    for (const [k, child] of Object.entries(v)) {
      const problem = textProblem(k, true);
      if (problem) return `holds a key that ${problem}`;
      stack.push([child, depth + 1]);
    }
  }
  // Depth is bounded now, so serialising is safe.
  const bytes = Buffer.byteLength(JSON.stringify(value) ?? '');
  return bytes > MAX_CARRIED_BYTES ? `must be at most ${MAX_CARRIED_BYTES / 1024} KiB as JSON (is ${Math.ceil(bytes / 1024)} KiB)` : null;
}

/** Whether `value` nests objects or arrays more than `max` levels deep; walked with an explicit stack, stopped at the first level past it. */
export function nestedDeeperThan(value: unknown, max: number): boolean {
  const stack: Array<[unknown, number]> = [[value, 1]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (typeof v !== 'object' || v === null) continue;
    if (depth > max) return true;
    for (const child of Object.values(v)) stack.push([child, depth + 1]);
  }
  return false;
}

/** An object carried along, checked by `carriedProblem`. */
export const carried = <T extends z.ZodType>(schema: T) =>
  schema.superRefine((v, ctx) => {
    const problem = carriedProblem(v);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  });
