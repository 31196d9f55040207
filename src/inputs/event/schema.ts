import { z } from 'zod';
import type { DeviceEvent } from '../../core/event.js';
import { parseWith } from '../../core/validation.js';
import { identityText } from '../limits.js';

const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;
const text = identityText;

/** `POST /v1/events` body (docs/api.md). Strict: unknown fields are rejected. */
export const eventSchema = z.strictObject({
  tenant_id: text(128),
  device_id: text(256),
  boot_id: text(128),
  sequence: z
    .number({ message: 'must be a whole number' })
    .int('must be a whole number')
    .min(0, 'must be at least 0')
    .max(Number.MAX_SAFE_INTEGER, 'must be at most 2^53-1'),
  state: text(64),
  observed_at: z
    .string()
    .regex(RFC3339, 'must be an RFC 3339 timestamp, e.g. 2026-11-30T12:00:00Z')
    .refine((s) => !Number.isNaN(Date.parse(s)), 'must be a real date and time'),
});

export type EventBody = z.output<typeof eventSchema>;

export function parseEvent(body: unknown): DeviceEvent {
  const e = parseWith(eventSchema, body, 'event');
  return {
    tenant: e.tenant_id,
    device: e.device_id,
    boot: e.boot_id,
    sequence: e.sequence,
    state: e.state,
    observedAt: Date.parse(e.observed_at),
  };
}
