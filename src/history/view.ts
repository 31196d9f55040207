import type { StoredHistoryEvent } from '../store/contract/index.js';

/** The fields of an event that are times (ms in the store, RFC 3339 in answers). */
const TIMES = ['at', 'first_at', 'last_at', 'until', 'resolved_at'] as const;

/** An event as GET /v1/incidents/{key}/history answers it: its times in RFC 3339, `at` first. */
export function historyView(e: StoredHistoryEvent): Record<string, unknown> {
  const out: Record<string, unknown> = { at: iso(e.at) };
  for (const [k, v] of Object.entries(e)) {
    if (k === 'at') continue;
    out[k] = (TIMES as readonly string[]).includes(k) && typeof v === 'number' ? iso(v) : v;
  }
  return out;
}

const iso = (ms: number) => new Date(ms).toISOString();
