import type { Config } from './schema.js';

/**
 * The fields a running server reads once, at start (each is marked "Read at
 * start" where the schema declares it): the store's shard count, fail-open's
 * timings and journal, how long a delivery lease lasts, the HTTP server's
 * body, batch and timeout bounds, the rate limiter's size, and how long an
 * expired incident is remembered, and the brokers inputs are taken from. A reload takes them in but they act only
 * after a restart, which the reload says.
 */
export const START_ONLY = [
  'incidents.expired_grace_seconds',
  'redis.shards',
  'failopen',
  'delivery.lease_ms',
  'limits.body_bytes',
  'limits.batch_lines',
  'limits.batch_bytes',
  'limits.rate_limit_buckets',
  'http',
  'ingest',
] as const;

const at = (c: Config, path: string): unknown => path.split('.').reduce<unknown>((v, k) => (v as Record<string, unknown> | undefined)?.[k], c);

/** The start-only fields whose value in `next` differs from the one the server started with. */
export function startOnlyChanged(started: Config, next: Config): string[] {
  return START_ONLY.filter((path) => JSON.stringify(at(started, path)) !== JSON.stringify(at(next, path)));
}
