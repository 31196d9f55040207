import type { FastifyReply, FastifyRequest } from 'fastify';
import { OPSGENIE_ROUTES } from './routes/opsgenie-alerts.js';
import type { RateLimiter } from '../access/rate-limit.js';
import { bearer, type TenantConfig, type TokenIndex, tokenIndex } from '../access/tenants.js';
import type { Config } from '../config/schema.js';
import { ApiError } from './errors.js';

/** The routes that take Opsgenie's `GenieKey` header: its Alert API and its heartbeat pings. */
const GENIE_KEY_ROUTES: ReadonlySet<string> = new Set([...OPSGENIE_ROUTES, '/v2/heartbeats/:name/ping']);
/** Failed tokens one client address may present per second (and in a burst) before it is answered 429. */
export const FAILED_TOKENS = { per_second: 1, burst: 20 };

/** Host names a server without tenants answers: loopback, plus the config's `allowed_hosts`. */
const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]', '::1']);

/** `Host` without its port, lower-cased: `[::1]:8080` → `[::1]`, `Localhost:80` → `localhost`. */
export function hostName(host: string | undefined): string {
  const h = (host ?? '').trim().toLowerCase();
  if (h.startsWith('[')) return h.slice(0, h.indexOf(']') + 1);
  const colon = h.lastIndexOf(':');
  return colon >= 0 && h.indexOf(':') === colon ? h.slice(0, colon) : h;
}

/**
 * Tenants and access, decided on the route a request matched (its
 * `config.doc.access`), never on how its URL is spelled: `/%761/incidents`
 * and `/v1/incidents` are one route with one rule. A route that does not
 * say is treated as needing a tenant's token (deny by default); a URL that
 * matches no route passes here and is answered 404 by the not-found handler.
 *
 * With tenants configured, a `tenant` route needs `Authorization: Bearer
 * <token>`; the token names the tenant every read and write is then limited
 * to, and that tenant's bucket must have a token left. A client presenting
 * wrong tokens is throttled by its address. Without tenants nothing is
 * authenticated (the server only binds loopback), but the `Host` must be a
 * loopback name or an allowed one, so a web page cannot reach the API by
 * DNS rebinding.
 */
export function accessControl(config: () => Config, limiter: RateLimiter) {
  // A callback hook, not an async one: nothing here waits, and fastify then makes no promise per request.
  return (req: FastifyRequest, _reply: FastifyReply, done: (err?: Error) => void): void => {
    try {
      admitRequest(req, config(), limiter);
    } catch (err) {
      done(err as Error);
      return;
    }
    done();
  };
}

/** The access rule for one request (see accessControl); throws the ApiError that refuses it. */
function admitRequest(req: FastifyRequest, cfg: Config, limiter: RateLimiter): void {
  if (req.routeOptions.url === undefined) return;
  const doc = req.routeOptions.config.doc;
  const index = tokenIndex(cfg.tenants);
  if (!index.enabled) {
    const host = hostName(req.headers.host);
    if (!LOOPBACK_HOSTS.has(host) && !cfg.allowed_hosts.includes(host)) {
      throw new ApiError('forbidden', `host ${JSON.stringify(host)} is not served: without tenants only loopback names and allowed_hosts are`);
    }
    refuseCrossSite(req, cfg);
    return;
  }
  if (doc?.access === 'open') return;
  // PagerDuty-style senders may carry the token as routing_key in the body instead: decided by the route.
  if (req.headers.authorization === undefined && doc?.tokenInBody) return;
  const tenant = bearerTenant(req, index);
  if (!tenant) {
    refuseToken(req, limiter, req.headers.authorization === undefined ? 'this call needs Authorization: Bearer <token>' : 'the bearer token is not valid');
  }
  admit(req, tenant, limiter);
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * Without tenants a request needs no token, so a page of another site open
 * in an operator's browser could post to the loopback API (ping a heartbeat,
 * expire a silence): the browser sends it, Host and all. Browsers say where
 * a request comes from (`Origin`, `Sec-Fetch-Site`); a state-changing
 * request from another site is refused. Producers (curl, Alertmanager,
 * agents) send neither header and are not affected.
 */
function refuseCrossSite(req: FastifyRequest, cfg: Config): void {
  if (SAFE_METHODS.has(req.method)) return;
  const site = req.headers['sec-fetch-site'];
  if (site === 'cross-site') throw new ApiError('forbidden', 'a request from another site may not change anything here (Sec-Fetch-Site: cross-site)');
  const origin = req.headers.origin;
  if (origin === undefined) return;
  let host: string;
  try {
    host = origin === 'null' ? 'null' : hostName(new URL(origin).host);
  } catch {
    host = 'null';
  }
  if (!LOOPBACK_HOSTS.has(host) && !cfg.allowed_hosts.includes(host)) {
    throw new ApiError(
      'forbidden',
      `a request from origin ${JSON.stringify(origin.slice(0, 200))} may not change anything here: without tenants only loopback names and allowed_hosts are`,
    );
  }
}

/**
 * Whether a request admitted earlier would still be, under the config in
 * force now: its token still names its tenant. A long-lived request (a
 * dashboard stream) asks on every push, so a reload that revokes a token
 * ends the sessions opened with it.
 */
export function stillAdmitted(req: FastifyRequest, cfg: Config): boolean {
  const index = tokenIndex(cfg.tenants);
  if (!index.enabled) return !req.scoped;
  return bearerTenant(req, index)?.id === req.tenant;
}

/** The tenant whose token the request's `Authorization: Bearer` carries, if any. */
function bearerTenant(req: FastifyRequest, index: TokenIndex): TenantConfig | null {
  const route = req.routeOptions.url;
  const token = bearer(req.headers.authorization, route !== undefined && GENIE_KEY_ROUTES.has(route));
  return token ? index.lookup(token) : null;
}

/** A missing or wrong token: 401, or 429 once this client address has presented too many. */
export function refuseToken(req: FastifyRequest, limiter: RateLimiter, message: string): never {
  const wait = limiter.take(`failed-token:${req.ip}`, FAILED_TOKENS.per_second, FAILED_TOKENS.burst);
  if (wait > 0) throw new ApiError('rate_limited', `too many requests without a valid token from this address; retry after ${wait} s`, undefined, wait);
  throw new ApiError('unauthorized', message);
}

/**
 * A request that carries `n` items (an Alertmanager post) costs `n` tokens:
 * the access rule took one, this takes the rest, all or none. More items
 * than the tenant's burst could never pass, so that is 413, not 429.
 */
/** Charges a request carrying `n` items (alerts, batch lines) to its tenant: `chargeItems` bound to the config and limiter. */
export type ChargeItems = (req: FastifyRequest, n: number) => void;

export function chargeItems(req: FastifyRequest, config: Config, limiter: RateLimiter, n: number): void {
  const tenant = req.scoped ? config.tenants.find((t) => t.id === req.tenant) : undefined;
  if (!tenant || n <= 1) return;
  const { per_second, burst } = tenant.rate_limit;
  if (n > burst)
    throw new ApiError(
      'payload_too_large',
      `this post carries ${n} items and tenant ${tenant.id} may send at most ${burst} at once (its rate_limit.burst): split it`,
    );
  const wait = limiter.take(tenant.id, per_second, burst, n - 1);
  if (wait > 0)
    throw new ApiError('rate_limited', `tenant ${tenant.id} is over its rate limit (${per_second}/s) for ${n} items; retry after ${wait} s`, undefined, wait);
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
