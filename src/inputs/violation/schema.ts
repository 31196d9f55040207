import { z } from 'zod';
import { parseWith } from '../../core/validation.js';
import { identityText } from '../limits.js';

const finite = z.number({ message: 'must be a number' }).refine(Number.isFinite, 'must be a finite number');

/** `POST /v1/violations` body (docs/api.md). Strict: unknown fields are rejected. */
export const violationSchema = z.strictObject({
  process_id: identityText(256),
  rule_id: identityText(128),
  // Seconds: a millisecond timestamp (any date after March 1973 is over 10^11 in ms) would land in a
  // window thousands of years away and never meet its re-fires; it is refused rather than guessed at.
  timestamp: z
    .number({ message: 'must be a number' })
    .min(0, 'must be epoch seconds, not negative')
    .lt(1e11, 'must be epoch seconds; this looks like milliseconds (divide by 1000)')
    .describe('epoch seconds (fractions allowed; a millisecond timestamp is refused)'),
  value: finite,
  center: finite,
  ucl: finite,
  lcl: finite,
});

export type Violation = z.output<typeof violationSchema>;

export function parseViolation(body: unknown): Violation {
  return parseWith(violationSchema, body, 'violation');
}
