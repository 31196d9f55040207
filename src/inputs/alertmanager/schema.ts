import { z } from 'zod';
import { parseWith } from '../../core/validation.js';
import { carried, identityText } from '../limits.js';

const time = z.string().refine((t) => !Number.isNaN(Date.parse(t)), 'must be an RFC 3339 date-time');
const labels = carried(z.record(z.string(), z.string()));

/**
 * The Alertmanager webhook payload, version 4. Not strict: newer
 * Alertmanagers add fields (truncatedAlerts was one), and refusing them would
 * break an upgrade of the sender. What onceonly reads is checked.
 */
export const alertSchema = z.object({
  status: z.enum(['firing', 'resolved']),
  labels,
  annotations: labels.default({}),
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

export function parseAlertmanager(body: unknown): AlertmanagerPayload {
  return parseWith(alertmanagerSchema, body, 'Alertmanager payload');
}
