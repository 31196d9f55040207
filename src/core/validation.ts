import type { z } from 'zod';

/** A validation issue as the API reports it: a dotted path and a message. */
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
  for (const issue of issues) {
    const base = issue.path.map(String);
    if (issue.code === 'unrecognized_keys' && issue.keys) {
      for (const k of issue.keys) out.push({ path: [...base, k].join('.'), message: 'unknown field' });
    } else {
      out.push({ path: base.join('.'), message: issue.message });
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
