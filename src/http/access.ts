import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../config/schema.js';
import { bearer, tokenIndex, type TenantConfig } from '../access/tenants.js';
import type { RateLimiter } from '../access/rate-limit.js';
import { ApiError } from './errors.js';

/**
 * Tenants and access (docs/api.md), as one onRequest hook: with tenants
 * configured, every /v1 and /v2 call needs `Authorization: Bearer <token>`;
 * the token names the tenant every read and write is then limited to, and that
 * tenant's bucket must have a token left. Operations (/healthz, /readyz,
 * /metrics) stay open for probes and scrapers. Without tenants, nothing is
 * checked (the server then only binds loopback).
 */
export function accessControl(config: () => Config, limiter: RateLimiter) {
  return async (req: FastifyRequest, _reply: FastifyReply): Promise<void> => {
    if (!/^\/v[12]\//.test(req.url)) return;
    const index = tokenIndex(config().tenants);
    if (!index.enabled) return;
    // PagerDuty-style senders may carry the token as routing_key in the body instead: decided by the route.
    if (req.headers.authorization === undefined && req.method === 'POST' && req.url.split('?')[0] === '/v2/enqueue') return;
    const token = bearer(req.headers.authorization);
    const tenant = token ? index.lookup(token) : null;
    if (!tenant) {
      throw new ApiError(
        'unauthorized',
        req.headers.authorization === undefined ? 'this call needs Authorization: Bearer <token>' : 'the bearer token is not valid',
      );
    }
    admit(req, tenant, limiter);
  };
}

/** The caller is this tenant, if its bucket has a token left. */
export function admit(req: FastifyRequest, tenant: TenantConfig, limiter: RateLimiter): void {
  req.tenant = tenant.id;
  req.scoped = true;
  const wait = limiter.take(tenant.id, tenant.rate_limit.per_second, tenant.rate_limit.burst);
  if (wait > 0)
    throw new ApiError(
      'rate_limited',
      `tenant ${tenant.id} is over its rate limit (${tenant.rate_limit.per_second}/s); retry after ${wait} s`,
      undefined,
      wait,
    );
}
