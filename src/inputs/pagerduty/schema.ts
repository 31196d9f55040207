import { carriedProblem, textProblem } from '../limits.js';

/**
 * PagerDuty Events API v2 (`POST /v2/enqueue`), as PagerDuty validates it:
 * routing_key always; trigger needs payload.summary, payload.source and
 * payload.severity; acknowledge and resolve need dedup_key; dedup_key at most
 * 255 characters. Unknown fields are ignored (PagerDuty's clients send
 * images, links, client, client_url, …). Errors are PagerDuty's list of
 * strings, one per problem.
 */
export const PD_SEVERITIES = ['critical', 'error', 'warning', 'info'] as const;
export type PdSeverity = (typeof PD_SEVERITIES)[number];

export interface PdEvent {
  routing_key: string;
  event_action: 'trigger' | 'acknowledge' | 'resolve';
  dedup_key?: string;
  payload?: {
    summary: string;
    source: string;
    severity: PdSeverity;
    timestamp?: string;
    component?: string;
    group?: string;
    class?: string;
    custom_details?: unknown;
  };
}

export type PdParse = { ok: true; event: PdEvent } | { ok: false; errors: string[] };

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const blank = (v: unknown) => typeof v !== 'string' || v.trim() === '';

export function parsePagerdutyEvent(body: unknown): PdParse {
  if (!isObject(body)) return { ok: false, errors: ['Event object must be a JSON object'] };
  const errors: string[] = [];
  if (blank(body.routing_key)) errors.push("'routing_key' is missing or blank");
  else if ((body.routing_key as string).length > 255) errors.push("'routing_key' must be at most 255 characters");
  const action = body.event_action;
  if (action !== 'trigger' && action !== 'acknowledge' && action !== 'resolve') {
    errors.push("'event_action' must be one of trigger, acknowledge, resolve");
  }
  if (body.dedup_key !== undefined && body.dedup_key !== null) {
    if (typeof body.dedup_key !== 'string') errors.push("'dedup_key' must be a string");
    else if (body.dedup_key.length > 255) errors.push("'dedup_key' must be at most 255 characters");
  }
  if ((action === 'acknowledge' || action === 'resolve') && blank(body.dedup_key)) errors.push("'dedup_key' is missing or blank");
  const p = body.payload;
  if (action === 'trigger') {
    if (!isObject(p)) errors.push("'payload' is missing or not an object");
    else {
      if (blank(p.summary)) errors.push("'payload.summary' is missing or blank");
      else if ((p.summary as string).length > 1024) errors.push("'payload.summary' must be at most 1024 characters");
      if (blank(p.source)) errors.push("'payload.source' is missing or blank");
      else if ((p.source as string).length > 255) errors.push("'payload.source' must be at most 255 characters");
      if (!PD_SEVERITIES.includes(p.severity as PdSeverity)) errors.push(`'payload.severity' must be one of ${PD_SEVERITIES.join(', ')}`);
      if (p.timestamp !== undefined && (typeof p.timestamp !== 'string' || Number.isNaN(Date.parse(p.timestamp)))) {
        errors.push("'payload.timestamp' must be an ISO 8601 date-time");
      }
      for (const f of ['component', 'group', 'class'] as const) {
        if (p[f] !== undefined && typeof p[f] !== 'string') errors.push(`'payload.${f}' must be a string`);
      }
    }
  }
  // The input limits every route shares: well-formed text without control characters, bounded objects.
  for (const [name, v] of [
    ['routing_key', body.routing_key],
    ['dedup_key', body.dedup_key],
  ] as const) {
    const problem = typeof v === 'string' ? textProblem(v) : null;
    if (problem) errors.push(`'${name}' ${problem}`);
  }
  if (action === 'trigger' && isObject(p)) {
    for (const f of ['summary', 'source', 'component', 'group', 'class'] as const) {
      const problem = typeof p[f] === 'string' ? textProblem(p[f] as string, f === 'summary') : null;
      if (problem) errors.push(`'payload.${f}' ${problem}`);
    }
    const problem = p.custom_details === undefined ? null : carriedProblem(p.custom_details);
    if (problem) errors.push(`'payload.custom_details' ${problem}`);
  }
  if (errors.length > 0) return { ok: false, errors };
  const event: PdEvent = {
    routing_key: body.routing_key as string,
    event_action: action as PdEvent['event_action'],
    ...(typeof body.dedup_key === 'string' && body.dedup_key !== '' ? { dedup_key: body.dedup_key } : {}),
    ...(action === 'trigger' ? { payload: p as PdEvent['payload'] } : {}),
  };
  return { ok: true, event };
}
