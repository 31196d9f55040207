import { z } from 'zod';
import { parseItemsWith } from '../../core/validation.js';
import { boundedText, carried, identityText, MAX_LABEL_NAME, MAX_LABEL_VALUE, textProblem } from '../limits.js';

const time = z.string().refine((t) => !Number.isNaN(Date.parse(t)), 'must be an RFC 3339 date-time');
/**
 * Names of labels and annotations: 1..256 characters, no control characters.
 * Checked on the record, so a refused name is described, not echoed whole.
 */
const named = <T extends z.ZodType>(values: T) =>
  z.record(z.string(), values).superRefine((record, ctx) => {
    for (const name of Object.keys(record)) {
      const problem =
        name.length === 0
          ? 'must not be empty'
          : name.length > MAX_LABEL_NAME
            ? `must be at most ${MAX_LABEL_NAME} characters (one is ${name.length})`
            : textProblem(name);
      if (problem) {
        ctx.addIssue({ code: 'custom', message: `a name ${problem}` });
        return;
      }
    }
  });
/** Label values up to 4,096 characters, no control characters: labels make the alert's identity. */
const labels = carried(named(boundedText(MAX_LABEL_VALUE)));
/** Annotations are free text (a description with line breaks), bounded as a whole by the carried limits. */
const annotations = carried(named(z.string()));

/**
 * The Alertmanager webhook payload, version 4. Not strict: newer
 * Alertmanagers add fields (truncatedAlerts was one), and refusing them would
 * break an upgrade of the sender. What onceonly reads is checked.
 */
export const alertSchema = z.object({
  status: z.enum(['firing', 'resolved']),
  labels,
  annotations: annotations.default({}),
  startsAt: time,
  /** 0001-01-01T00:00:00Z while firing */
  endsAt: time.optional(),
  generatorURL: z.string().optional(),
  fingerprint: identityText(128),
});

export const alertmanagerSchema = z.object({
  version: z.literal('4', { message: 'only webhook payload version "4" is understood' }),
  status: z.enum(['firing', 'resolved']),
  receiver: z.string().optional(),
  alerts: z.array(alertSchema),
});

export type AlertmanagerPayload = z.output<typeof alertmanagerSchema>;
export type Alert = z.output<typeof alertSchema>;

/** The payload around its alerts: checked first, so a list that is not one is refused at once. */
const envelopeSchema = alertmanagerSchema.extend({ alerts: z.array(z.unknown()) });

/** A payload, its alerts checked one by one until a refusal's worth of issues is found. */
export function parseAlertmanager(body: unknown): AlertmanagerPayload {
  const { envelope, items } = parseItemsWith(envelopeSchema, 'alerts', alertSchema, body, 'Alertmanager payload');
  return { ...envelope, alerts: items };
}
