import { startFake, type FakeServer, type Recorded } from './http-fake.js';

const SEVERITIES = ['critical', 'error', 'warning', 'info'];
const ACTIONS = ['trigger', 'acknowledge', 'resolve'];

/** Why PagerDuty's Events API v2 would refuse this event, as its `errors` list says it; empty when it takes it. */
function problems(e: any): string[] {
  const out: string[] = [];
  if (typeof e !== 'object' || e === null || Array.isArray(e)) return ['Event object is not a JSON object'];
  if (typeof e.routing_key !== 'string') out.push("'routing_key' is missing or blank");
  else if (e.routing_key.length !== 32) out.push("Length of 'routing_key' is incorrect (should be 32 characters)");
  if (!ACTIONS.includes(e.event_action)) out.push("'event_action' is invalid (must be one of the following: 'trigger', 'acknowledge' or 'resolve')");
  if (e.dedup_key !== undefined && (typeof e.dedup_key !== 'string' || e.dedup_key.length > 255))
    out.push("'dedup_key' must be a string of at most 255 characters");
  if ((e.event_action === 'acknowledge' || e.event_action === 'resolve') && !(typeof e.dedup_key === 'string' && e.dedup_key.trim() !== '')) {
    out.push("'dedup_key' is missing or blank");
  }
  if (e.event_action === 'trigger') {
    const p = e.payload;
    if (typeof p !== 'object' || p === null) out.push("'payload' is missing or not an object");
    else {
      if (typeof p.summary !== 'string' || p.summary.trim() === '') out.push("'payload.summary' is missing or blank");
      else if (p.summary.length > 1024) out.push("'payload.summary' must be at most 1024 characters");
      if (typeof p.source !== 'string' || p.source.trim() === '') out.push("'payload.source' is missing or blank");
      if (!SEVERITIES.includes(p.severity)) out.push("'payload.severity' is invalid (must be one of the following: 'critical', 'warning', 'error' or 'info')");
    }
  }
  return out;
}

/**
 * A stand-in for PagerDuty's Events API v2 (POST /v2/enqueue): it checks an
 * event as PagerDuty does (a 32-character routing key, a known action, a
 * trigger's summary, source and severity, a dedup_key for acknowledge and
 * resolve) and answers 400 `invalid event` with PagerDuty's `errors` list, or
 * 202 with the dedup_key. `accepted` holds the events it took, in order.
 *
 * Its rate limit is PagerDuty's ("Events API Rate Limits"): about 120 calls a
 * minute per integration key, counted over the 60 seconds before each call;
 * past it the call is answered `429 - Request Limit Exceeded` (no Retry-After)
 * and the event is not ingested. `perMinute` and `windowMs` scale it down for
 * tests that must meet it in a second.
 */
export async function startPagerdutyFake(o: { perMinute?: number; windowMs?: number } = {}): Promise<FakeServer & { accepted: Recorded[] }> {
  const { perMinute = 120, windowMs = 60_000 } = o;
  const accepted: Recorded[] = [];
  /** Each integration key's calls in the last window (times, oldest first). */
  const calls = new Map<string, number[]>();
  const limited = (key: string) => {
    const now = Date.now();
    const recent = (calls.get(key) ?? []).filter((t) => t > now - windowMs);
    const over = recent.length >= perMinute;
    if (!over) recent.push(now);
    calls.set(key, recent);
    return over;
  };
  const fake = await startFake((r) => {
    if (r.method !== 'POST' || r.path !== '/v2/enqueue') return { status: 404, body: { status: 'not found' } };
    const errors = problems(r.body);
    if (errors.length > 0) return { status: 400, body: { status: 'invalid event', message: 'Event object is invalid', errors } };
    if (limited(String(r.body.routing_key))) return { status: 429, body: { status: 'throttle event', message: 'Request Limit Exceeded' } };
    accepted.push(r);
    return { status: 202, body: { status: 'success', message: 'Event processed', dedup_key: r.body.dedup_key } };
  });
  return Object.assign(fake, { accepted });
}
