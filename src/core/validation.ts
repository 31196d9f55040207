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
}

/**
 * Flattens schema issues into `{path, message}`. An unknown field is reported
 * at its own path (`details` rather than the enclosing object), so the caller
 * sees exactly which field to remove.
 */
export function formatIssues(issues: readonly RawIssue[]): Issue[] {
  const out: Issue[] = [];
  for (const problem of issues) {
    const base = problem.path.map(String);
    if (problem.code === 'unrecognized_keys' && problem.keys) {
      for (const k of problem.keys) out.push({ path: [...base, k].join('.'), message: 'unknown field' });
    } else {
      out.push({ path: base.join('.'), message: problem.message });
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
  const issues = formatIssues(result.error.issues);
  const first = issues[0];
  const where = first?.path ? `${first.path}: ` : '';
  throw new ValidationError(`invalid ${what}: ${where}${first?.message ?? 'invalid'}`, issues);
}
