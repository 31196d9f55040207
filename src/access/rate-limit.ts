import type { Clock } from '../core/clock.js';

interface Bucket {
  tokens: number;
  at: number;
}

/**
 * Token buckets by name (a tenant, or a client address for failed tokens), in this process (so N replicas allow N times
 * the rate: set per_second for one replica). `take` answers 0 when the request
 * may go, else the seconds until a token is back (for Retry-After).
 */
export class RateLimiter {
  private readonly buckets = new Map<string, Bucket>();

  constructor(private readonly clock: Clock) {}

  /** Takes `n` tokens (all or none). */
  take(tenant: string, perSecond: number, burst: number, n = 1): number {
    const now = this.clock.now();
    const b = this.buckets.get(tenant) ?? { tokens: burst, at: now };
    b.tokens = Math.min(burst, b.tokens + ((now - b.at) / 1000) * perSecond);
    b.at = now;
    this.buckets.set(tenant, b);
    if (b.tokens >= n) {
      b.tokens -= n;
      return 0;
    }
    return Math.max(1, Math.ceil((n - b.tokens) / perSecond));
  }
}
