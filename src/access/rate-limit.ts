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
  private readonly buckets = new Map<string, { b: Bucket; perSecond: number; burst: number }>();

  constructor(
    private readonly clock: Clock,
    /**
     * Buckets kept at most. Failed-token buckets are keyed by client address,
     * which an attacker chooses (IPv6 gives plenty): past this many, full
     * buckets (the same as none) are dropped first, then the oldest.
     */
    private readonly maxBuckets = 100_000,
  ) {}

  /** Takes `n` tokens (all or none). */
  take(tenant: string, perSecond: number, burst: number, n = 1): number {
    const now = this.clock.now();
    const held = this.buckets.get(tenant);
    const b = held?.b ?? { tokens: burst, at: now };
    b.tokens = Math.min(burst, b.tokens + ((now - b.at) / 1000) * perSecond);
    b.at = now;
    if (!held) {
      if (this.buckets.size >= this.maxBuckets) this.evict(now);
      this.buckets.set(tenant, { b, perSecond, burst });
    }
    if (b.tokens >= n) {
      b.tokens -= n;
      return 0;
    }
    return Math.max(1, Math.ceil((n - b.tokens) / perSecond));
  }

  /** Makes room: drops every bucket that has refilled (forgetting it changes nothing), then, if still full, the oldest tenth. */
  private evict(now: number): void {
    for (const [name, { b, perSecond, burst }] of this.buckets) {
      if (b.tokens + ((now - b.at) / 1000) * perSecond >= burst) this.buckets.delete(name);
    }
    if (this.buckets.size < this.maxBuckets) return;
    let drop = Math.ceil(this.maxBuckets / 10);
    for (const name of this.buckets.keys()) {
      if (drop-- <= 0) break;
      this.buckets.delete(name);
    }
  }

  /** Buckets held now (for tests and metrics). */
  get size(): number {
    return this.buckets.size;
  }
}
