import { z } from 'zod';
import { SEVERITIES } from '../../core/fingerprint.js';
import { carried, freeText, identityText, labelSet, MAX_SUMMARY } from '../limits.js';

/** The most an identity field may hold. */
export const MAX_IDENTITY = 512;

const identityField = identityText(MAX_IDENTITY);

/** `POST /v1/incidents` body (docs/api.md). Strict: unknown fields are rejected. */
export const incidentSchema = z.strictObject({
  element_id: identityField,
  fault_class: identityField,
  root_cause_id: identityField,
  severity: z.enum(SEVERITIES, { message: `must be one of ${SEVERITIES.join(', ')}` }),
  cleared: z.boolean().default(false),
  summary: freeText(MAX_SUMMARY).optional(),
  details: carried(z.record(z.string(), z.unknown())).optional(),
  /** Not part of identity or fingerprint: the latest arrival's go out with each change, and routes, silences and inhibition match them. */
  labels: labelSet.optional(),
});

export type IncidentInput = z.input<typeof incidentSchema>;
export type Incident = z.output<typeof incidentSchema>;
