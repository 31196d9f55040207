import { z } from 'zod';
import { parseWith } from '../../core/validation.js';

const time = z.string().refine((t) => !Number.isNaN(Date.parse(t)), 'must be an RFC 3339 date-time');
const labels = z.record(z.string(), z.string());

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
  fingerprint: z.string().min(1, 'must not be empty').max(128, 'must be at most 128 characters'),
});

export const alertmanagerSchema = z.object({
  version: z.literal('4', { message: 'only webhook payload version "4" is understood' }),
  status: z.enum(['firing', 'resolved']),
  receiver: z.string().optional(),
  alerts: z.array(alertSchema).max(10_000, 'at most 10,000 alerts per call'),
});

export type AlertmanagerPayload = z.output<typeof alertmanagerSchema>;
export type Alert = z.output<typeof alertSchema>;

export function parseAlertmanager(body: unknown): AlertmanagerPayload {
  return parseWith(alertmanagerSchema, body, 'Alertmanager payload');
}
