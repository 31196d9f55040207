/**
 * Capped, jittered exponential backoff: the i-th retry (from 0)
 * waits d_i = min(d_max, d_0 * 2^i) * (1 + U), U uniform in [0, 0.25). The
 * jitter spreads a recovering destination's retries; `random` is injected.
 */
export interface BackoffPolicy {
  baseMs: number;
  maxMs: number;
}

export const JITTER = 0.25;

export function backoffDelay(i: number, p: BackoffPolicy, random: () => number = Math.random): number {
  return Math.min(p.maxMs, p.baseMs * 2 ** i) * (1 + JITTER * random());
}

/**
 * `Retry-After` (RFC 9110): delay-seconds or an HTTP-date; null when absent or
 * unreadable. A date in the past means "now".
 */
export function retryAfterMs(header: string | null | undefined, now: number): number | null {
  if (header == null || header.trim() === '') return null;
  const v = header.trim();
  if (/^\d+$/.test(v)) return Number(v) * 1000;
  const at = Date.parse(v);
  return Number.isNaN(at) ? null : Math.max(0, at - now);
}
