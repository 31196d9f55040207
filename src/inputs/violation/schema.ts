import { z } from 'zod';
import { parseWith } from '../../core/validation.js';
import { identityText } from '../limits.js';

const finite = z.number({ message: 'must be a number' }).refine(Number.isFinite, 'must be a finite number');

/** `POST /v1/violations` body (docs/api.md). Strict: unknown fields are rejected. */
export const violationSchema = z.strictObject({
  process_id: identityText(256),
  rule_id: identityText(128),
  timestamp: finite.refine((t) => t >= 0, 'must be epoch seconds, not negative'),
  value: finite,
  center: finite,
  ucl: finite,
  lcl: finite,
});

export type Violation = z.output<typeof violationSchema>;

export function parseViolation(body: unknown): Violation {
  return parseWith(violationSchema, body, 'violation');
}
