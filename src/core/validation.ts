import type { z } from 'zod';

/** One validation problem as the API reports it (an entry of `issues`): a dotted path and a message. */
export interface Issue {
  path: string;
  message: string;
}

/**
 * Issues an error body lists at most. A body of 1,000 bad alerts had 3,000
 * issues, a 220 KB answer to a 150 KB post, kept whole for its
 * Idempotency-Key: what a sender learns from the first hundred is what it
 * needs, and the answer stays smaller than the request. A list of items is
 * checked only until this many issues are found (see parseItemsWith).
 */
export const MAX_ISSUES_SHOWN = 100;

export interface RawIssue {
  code?: string;
  path: ReadonlyArray<PropertyKey>;
  message: string;
  keys?: readonly string[];
  /** too_small / too_big: what was measured (number, string, array, …), the bound, and whether it is allowed */
  origin?: string;
  minimum?: number | bigint;
  maximum?: number | bigint;
  inclusive?: boolean;
}

/** How a JSON type is named in a message: "must be a string, not a number". */
const A: Record<string, string> = {
  string: 'a string',
  number: 'a number',
  boolean: 'true or false',
  object: 'an object',
  array: 'an array',
  null: 'null',
  int: 'a whole number',
  bigint: 'a number',
};
const named = (type: string) => A[type] ?? type;

/** What a size bound counts, by what was measured. */
const UNITS: Record<string, [string, string]> = {
  string: ['character', 'characters'],
  array: ['item', 'items'],
  set: ['item', 'items'],
  file: ['byte', 'bytes'],
};

/** A default size message ("Too small: expected number to be >0") in the API's words: "must be greater than 0". */
function bound(issue: RawIssue): string | null {
  const small = issue.code === 'too_small';
  const limit = small ? issue.minimum : issue.maximum;
  if (limit === undefined || !/^Too (small|big):/.test(issue.message)) return null;
  const unit = UNITS[issue.origin ?? ''];
  if (unit) {
    const n = Number(limit);
    const what = `${n} ${n === 1 ? unit[0] : unit[1]}`;
    return small ? (n === 1 && issue.inclusive !== false ? 'must not be empty' : `must have at least ${what}`) : `must have at most ${what}`;
  }
  if (small) return issue.inclusive === false ? `must be greater than ${limit}` : `must be at least ${limit}`;
  return issue.inclusive === false ? `must be less than ${limit}` : `must be at most ${limit}`;
}

/**
 * The schema library's own wording in the API's: a wrong type ("Invalid
 * input: expected string, received number") says what the field must be and
 * what it was; a size bound says the bound in words.
 */
function plain(issue: RawIssue): string {
  const sized = bound(issue);
  if (sized) return sized;
  const m = /^Invalid input: expected (\w+), received (\w+)$/.exec(issue.message);
  if (!m) return issue.message;
  const [, expected, received] = m as unknown as [string, string, string];
  return received === 'undefined' ? 'required' : `must be ${named(expected)}, not ${named(received)}`;
}

/** Whether `path` names a field the input does not have (its parent exists, the field is absent). */
function missing(input: unknown, path: ReadonlyArray<PropertyKey>): boolean {
  let at: unknown = input;
  for (const [i, step] of path.entries()) {
    if (at === null || typeof at !== 'object') return false;
    const next = (at as Record<PropertyKey, unknown>)[step];
    if (i === path.length - 1) return next === undefined;
    at = next;
  }
  return false;
}

/**
 * Flattens schema issues into `{path, message}`, one per field: the first
 * thing wrong with it (a later check of the same field, run on a value that
 * already failed, says nothing new). An unknown field is reported at its own
 * path (`details` rather than the enclosing object), so the caller sees
 * exactly which field to remove. Given the input, a field it lacks is
 * "required", whatever the field's own check would have said of a value.
 */
export function formatIssues(issues: readonly RawIssue[], input?: unknown): Issue[] {
  const out: Issue[] = [];
  const seen = new Set<string>();
  const add = (path: string, message: string) => {
    if (seen.has(path)) return;
    seen.add(path);
    out.push({ path, message });
  };
  for (const problem of issues) {
    const base = problem.path.map(String);
    if (problem.code === 'unrecognized_keys' && problem.keys) {
      for (const k of problem.keys) add([...base, k].join('.'), 'unknown field');
    } else {
      const message = base.length > 0 && input !== undefined && missing(input, problem.path) ? 'required' : plain(problem);
      add(base.join('.'), base.length === 0 ? `the body ${message}` : message);
    }
  }
  return out;
}

/** Thrown for bad input, at any boundary (HTTP, CLI, library). */
export class ValidationError extends Error {
  readonly code = 'invalid_input';
  override name = 'ValidationError';
  constructor(
    message: string,
    readonly issues: Issue[],
  ) {
    super(message);
  }
}

/** Parses `body` with `schema`, or throws a ValidationError naming the first bad field (`what` names the input). */
export function parseWith<S extends z.ZodType>(schema: S, body: unknown, what: string): z.output<S> {
  const result = schema.safeParse(body);
  if (result.success) return result.data;
  throw failure(formatIssues(result.error.issues, body), what);
}

/**
 * Parses a body whose `key` is a list of items checked by `item` (the rest
 * by `envelope`), item by item, stopping once MAX_ISSUES_SHOWN issues are
 * found: a refusal lists no more than that, and checking the rest of a
 * list of a thousand bad items is work for an answer nobody reads (it cost
 * five times a valid list's check, on the shared event loop).
 */
export function parseItemsWith<E extends z.ZodType, I extends z.ZodType>(
  envelope: E,
  key: string,
  item: I,
  body: unknown,
  what: string,
): { envelope: z.output<E>; items: Array<z.output<I>> } {
  const outer = envelope.safeParse(body);
  if (!outer.success) throw failure(formatIssues(outer.error.issues, body), what);
  const list = (outer.data as Record<string, unknown>)[key] as unknown[];
  const raw: RawIssue[] = [];
  const items: Array<z.output<I>> = [];
  // Through the Standard Schema entry: it reports issues without building a ZodError (an Error,
  // with its stack), which made each failing item cost several times a whole list's check.
  const check = item['~standard'].validate;
  for (let i = 0; i < list.length; i++) {
    const r = check(list[i]);
    if (r instanceof Promise) throw new TypeError(`${what}: an item schema must check synchronously`);
    if (!r.issues) {
      items.push(r.value as z.output<I>);
      continue;
    }
    for (const issue of r.issues as readonly RawIssue[]) raw.push({ ...issue, path: [key, i, ...issue.path] });
    if (raw.length < MAX_ISSUES_SHOWN - 1 || i === list.length - 1) continue;
    const issues = formatIssues(raw, body);
    if (issues.length >= MAX_ISSUES_SHOWN - 1) {
      issues.splice(MAX_ISSUES_SHOWN - 1);
      issues.push({ path: key, message: `${key} after ${key}.${i} were not checked: a refusal lists at most ${MAX_ISSUES_SHOWN} issues` });
      throw failure(issues, what);
    }
  }
  if (raw.length > 0) throw failure(formatIssues(raw, body), what);
  return { envelope: outer.data, items };
}

function failure(issues: Issue[], what: string): ValidationError {
  const first = issues[0];
  const where = first?.path ? `${first.path}: ` : '';
  return new ValidationError(`invalid ${what}: ${where}${first?.message ?? 'invalid'}`, issues);
}
