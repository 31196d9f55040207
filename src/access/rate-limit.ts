import type { Clock } from '../core/clock.js';

interface Bucket {
  tokens: number;
  at: number;
}

/**
 * Token buckets, one per tenant, in this process (so N replicas allow N times
 * the rate: set per_second for one replica). `take` answers 0 when the request
 * may go, else the seconds until a token is back (for Retry-After).
 */
export class RateLimiter {
  private readonly buckets = new Map<string, Bucket>();

  constructor(private readonly clock: Clock) {}

  take(tenant: string, perSecond: number, burst: number): number {
    const now = this.clock.now();
    const b = this.buckets.get(tenant) ?? { tokens: burst, at: now };
    b.tokens = Math.min(burst, b.tokens + ((now - b.at) / 1000) * perSecond);
    b.at = now;
    this.buckets.set(tenant, b);
    if (b.tokens >= 1) {
      b.tokens -= 1;
      return 0;
    }
    return Math.max(1, Math.ceil((1 - b.tokens) / perSecond));
  }
}
