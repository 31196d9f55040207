import { DECISION_REASONS } from '../../core/decision.js';
import { ERROR_CODES } from '../errors.js';
import { MUTE_KINDS } from '../../mute/kinds.js';

/** Response bodies shared by several routes, as JSON Schema. */

export const errorBody = {
  type: 'object',
  required: ['error'],
  properties: {
    error: {
      type: 'object',
      required: ['code', 'message'],
      properties: {
        code: {
          type: 'string',
          enum: Object.keys(ERROR_CODES),
        },
        message: { type: 'string' },
        issues: {
          type: 'array',
          items: { type: 'object', required: ['path', 'message'], properties: { path: { type: 'string' }, message: { type: 'string' } } },
        },
      },
    },
  },
};

/** Whether a key's deliveries are muted now, and by what. */
export const mutedBody = {
  description: 'null, or what holds the key\'s deliveries now: `{"by": "silence", "id": "<silence id>"}`; the decision is made and recorded all the same',
  oneOf: [{ type: 'null' }, { type: 'object', required: ['by', 'id'], properties: { by: { type: 'string', enum: [...MUTE_KINDS] }, id: { type: 'string' } } }],
};

export const decisionBody = {
  type: 'object',
  required: ['decision', 'dedup_key', 'provisional'],
  properties: {
    decision: { type: 'string', enum: ['CREATE', 'SUPPRESS', 'UPDATE'] },
    reason: {
      type: 'string',
      enum: [...new Set(DECISION_REASONS.map(([, reason]) => reason))],
      description:
        'why, as the decision metric labels it: CREATE new or expired (the key expired unclosed and fired again within the grace: its TTL is too short); SUPPRESS unchanged (a repeat), lost_race (a copy that raced the CREATE and lost) or stale (an alert episode already resolved); UPDATE severity, cleared or reopened; provisional for any decision made while the store was unreachable',
    },
    dedup_key: { type: 'string' },
    provisional: { type: 'boolean', description: 'true only when the store was unreachable and the decision was made in the local journal' },
    muted: mutedBody,
  },
};

export const incidentView = {
  type: 'object',
  properties: {
    dedup_key: { type: 'string' },
    element_id: { type: 'string', description: 'as the create received it (incidents posted to /v1/incidents only)' },
    fault_class: { type: 'string', description: 'as the create received it (incidents posted to /v1/incidents only)' },
    root_cause_id: { type: 'string', description: 'as the create received it (incidents posted to /v1/incidents only)' },
    summary: { type: 'string', description: "the latest arrival's" },
    labels: {
      type: 'object',
      additionalProperties: { type: 'string' },
      description: "the latest arrival's: an incident's labels, an Alertmanager alert's, or PagerDuty's source fields",
    },
    severity: { type: 'string' },
    cleared: { type: 'boolean' },
    created_at: { type: 'string', format: 'date-time' },
    last_seen_at: { type: 'string', format: 'date-time' },
    refires: { type: 'integer', description: 'arrivals after the CREATE' },
    updates: { type: 'integer', description: 'arrivals that were UPDATEs' },
    expires_at: { type: 'string', format: 'date-time' },
  },
};

export const limitQuery = (max: number, dflt: number) => ({
  limit: { description: `how many, 1..${max} (default ${dflt})`, schema: { type: 'integer', minimum: 1, maximum: max } },
});

export const object = { type: 'object' };
