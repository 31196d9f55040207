import type { z } from 'zod';

/** One validation problem as the API reports it (an entry of `issues`): a dotted path and a message. */
export interface Issue {
  path: string;
  message: string;
}

interface RawIssue {
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
  const issues = formatIssues(result.error.issues, body);
  const first = issues[0];
  const where = first?.path ? `${first.path}: ` : '';
  throw new ValidationError(`invalid ${what}: ${where}${first?.message ?? 'invalid'}`, issues);
}
