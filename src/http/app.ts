import { randomBytes } from 'node:crypto';
import Fastify, { type FastifyInstance, type FastifyReply } from 'fastify';
import type { Logger } from 'pino';
import { DEFAULT_TENANT, type Deduplicator } from '../engine/deduplicator.js';
import type { Metrics } from '../observe/metrics.js';
import { ApiError, errorBody } from './errors.js';
import { eventRefusal, toApiError } from './error-mapping.js';
import { incidentRoutes } from './routes/incidents.js';
import { historyRoutes, type HistorySource } from './routes/history.js';
import { eventRoutes } from './routes/events.js';
import { violationRoutes } from './routes/violations.js';
import type { ViolationIngest } from '../engine/violations.js';
import type { EventIngest } from '../engine/events.js';
import type { EventAccounting } from '../observe/event-accounting.js';
import { operationRoutes } from './routes/operations.js';
import { accessControl, type ChargeItems, chargeItems } from './access.js';
import { ndjsonParser } from './batch.js';
import { utf8JsonParser } from './utf8-json.js';
import { idempotency } from './idempotency.js';
import { RateLimiter } from '../access/rate-limit.js';
import type { Config } from '../config/schema.js';
import type { Clock } from '../core/clock.js';
import { deadLetterRoutes } from './routes/dead-letters.js';
import { ENQUEUE, enqueueRoutes, pagerdutyError } from './routes/enqueue.js';
import type { PagerdutyIngest } from '../engine/pagerduty.js';
import type { OpsgenieIngest } from '../engine/opsgenie.js';
import { OPSGENIE_ROUTES, opsgenieAlertRoutes, opsgenieError } from './routes/opsgenie-alerts.js';
import type { AlertmanagerIngest } from '../engine/alertmanager.js';
import { alertmanagerRoutes } from './routes/alertmanager.js';
import { dashboardRoutes } from './routes/dashboard.js';
import { auditRoutes } from './routes/audit.js';
import { silenceRoutes } from './routes/silences.js';
import { alertmanagerApiRoutes } from './routes/alertmanager-api.js';
import type { MuteSource } from '../mute/mutes.js';
import type { SilenceCache } from '../mute/silence-cache.js';
import type { DecisionTally } from '../observe/decision-tally.js';
import type { DeliveryTally } from '../observe/delivery-tally.js';
import type { DeliveryStore } from '../store/contract/index.js';
import { MAX_PARAM_CHARS } from './limits.js';
import { openApiRoutes } from './routes/openapi.js';
import { heartbeatRoutes } from './routes/heartbeats.js';
import type { HeartbeatMonitor } from '../heartbeats/heartbeats.js';
import type { GroupApplier } from '../groups/groups.js';
import { routeTestRoutes } from './routes/route-test.js';
import { groupRoutes } from './routes/groups.js';
import type { DocumentedRoute } from './openapi/document.js';

/** Seconds a 503 asks the producer to wait before retrying (a degraded store, a full disk). */
export const UNAVAILABLE_RETRY_AFTER_S = 5;
/** The Retry-After of a refusal while draining: another replica can take it at once. */
export const SHUTTING_DOWN_RETRY_AFTER_S = 1;

declare module 'fastify' {
  interface FastifyInstance {
    /** Every route registered (method, URL and its doc, if it has one), HEAD aside. */
    routeTable: ReadonlyArray<{ method: string; url: string; doc?: import('./openapi/route-doc.js').RouteDoc }>;
    /** The service's logger (fastify itself has none): a line a request logs carries its `reqId`. */
    logger: Logger;
  }
  interface FastifyRequest {
    /** The caller's tenant; `default` while no tenants are configured. */
    tenant: string;
    /** True when tenants are configured: every read and write is limited to `tenant`. */
    scoped: boolean;
  }
}

export interface AppOptions {
  /** What mutes a key now (silences, maintenance, inhibition): what amtool's alert query shows; the silences alone when absent. */
  mutes?: MuteSource;
  /** ms, when this replica last found the store's data lost (its epoch marker); null: never */
  storeResetAt?: () => number | null;
  dedup: Deduplicator;
  events: EventIngest;
  violations: ViolationIngest;
  accounting: EventAccounting;
  deliveries: DeliveryStore;
  metrics: Metrics;
  logger: Logger;
  https?: { cert: Buffer; key: Buffer } | null;
  /** how long a client may take to send its headers and its whole request (ms) */
  timeouts?: { headersMs: number; requestMs: number };
  config: () => Config;
  clock: Clock;
  /** the decision mix per tenant, for the dashboard */
  tally: DecisionTally;
  deliveryTally: DeliveryTally;
  /** This replica's copy of the silences, reloaded at once after a silence is written here. */
  silences: SilenceCache;
  /** How often a dashboard stream sends a snapshot (default 1 s; tests shorten it). */
  dashboardIntervalMs?: number;
  /** Dead-man's switches: their pings and states. */
  heartbeats: HeartbeatMonitor;
  /** Groups of incidents, as GET /v1/groups/{group_key} shows them. */
  groups: Pick<GroupApplier, 'view'>;
  /** Keys' histories (GET /v1/incidents/{key}/history): the recorder (flushed before a read) and the store. */
  history: HistorySource;
  /** The drop-in inputs' deciders, built with the rest in app/ (the brokers share Alertmanager's). */
  dropIns: { pagerduty: PagerdutyIngest; opsgenie: OpsgenieIngest; alertmanager: AlertmanagerIngest };
}

/** Node's own server options for the timeouts (fastify passes them to createServer). */
const serverTimeouts = (t: AppOptions['timeouts']) =>
  t ? { headersTimeout: t.headersMs, requestTimeout: t.requestMs, connectionsCheckingInterval: Math.min(1000, t.headersMs) } : {};

export function buildApp({
  storeResetAt,
  mutes,
  dedup,
  events,
  violations,
  accounting,
  deliveries,
  metrics,
  logger,
  https,
  timeouts,
  config,
  clock,
  tally,
  deliveryTally,
  silences,
  dashboardIntervalMs,
  heartbeats,
  groups,
  history,
  dropIns,
}: AppOptions): FastifyInstance {
  // Read at start: fastify takes the body bound when it is made.
  const bodyBytes = config().limits.body_bytes;
  const app = Fastify({
    // No logger for fastify: given one, it makes a child logger per request (a pino child, and its garbage,
    // on every answer). Per-request logs at thousands a second cost more than they tell; the few lines a
    // request may log (a 5xx) go to `app.logger` with the request's id.
    bodyLimit: bodyBytes,
    // A path parameter as the router sees it, still percent-encoded: the longest key the list can show
    // (a PagerDuty dedup_key of 255 characters of 4 UTF-8 bytes each, each byte %XX) must reach its route.
    // Past this the router matches nothing (404); the route checks the decoded key itself.
    routerOptions: { maxParamLength: MAX_PARAM_CHARS },
    // A request that arrives while the server drains is refused in our own shape (the hook below),
    // not fastify's default 503 body.
    return503OnClosing: false,
    // Every request has an id (a caller's X-Request-Id, or one made here): routes pass it to the store, whose audit trail records it.
    requestIdHeader: 'x-request-id',
    // A URL the router cannot even decode (a malformed percent-encoding) matches no route: 404 in our error shape.
    frameworkErrors: (error, _req, reply) => {
      const e = new ApiError('not_found', `no route for this URL: ${error.message}`);
      metrics.rejected.labels('unmatched', e.code).inc();
      void (reply as FastifyReply).code(404).send(errorBody(e));
    },
    genReqId: requestIds(),
    // Node answers 408 and closes a connection whose headers or whole request take longer than
    // these; it looks every second (its default, 30 s, would let a slow client hold on that much longer).
    requestTimeout: timeouts?.requestMs ?? 0,
    ...(https ? { https: { ...https, ...serverTimeouts(timeouts) } } : { http: serverTimeouts(timeouts) }),
  }) as unknown as FastifyInstance;

  // Every route as registered, with the doc it carries: the OpenAPI document is made from this table.
  const routes: Array<DocumentedRoute | { method: string; url: string; doc?: undefined }> = [];
  app.decorate('routeTable', routes);
  app.decorate('logger', logger);
  app.addHook('onRoute', (r) => {
    for (const method of [r.method].flat()) if (method !== 'HEAD') routes.push({ method, url: r.url, doc: r.config?.doc });
  });
  app.decorateRequest('tenant', DEFAULT_TENANT);
  app.decorateRequest('scoped', false);
  const limiter = new RateLimiter(clock, config().limits.rate_limit_buckets);
  // Draining: what is in flight is answered, and what arrives on a connection still open is refused with
  // the error shape (shutting_down, Retry-After, Connection: close) so the client goes to another replica.
  let draining = false;
  app.addHook('preClose', async () => {
    draining = true;
  });
  app.addHook('onRequest', async (_req, reply) => {
    if (!draining) return;
    reply.header('Connection', 'close');
    throw new ApiError('shutting_down', 'this replica is shutting down: send the request again, to another replica', undefined, SHUTTING_DOWN_RETRY_AFTER_S);
  });
  app.addHook('onRequest', accessControl(config, limiter));
  // The API speaks JSON only: fastify's built-in text/plain parser would let a
  // text body reach validation as a string; without it fastify answers 415.
  app.removeContentTypeParser('text/plain');
  utf8JsonParser(app, bodyBytes);

  app.setErrorHandler((err, req, reply) => {
    const apiError = toApiError(err, bodyBytes);
    if (apiError.status >= 500) logger.error({ err, url: req.url, reqId: req.id }, 'request failed');
    metrics.rejected.labels(routeLabel(req.routeOptions.url), apiError.code).inc();
    // An unauthenticated request belongs to no tenant: it is in no tenant's accounting.
    if (req.method === 'POST' && req.routeOptions.url === '/v1/events' && apiError.code !== 'unauthorized')
      accounting.refused(eventRefusal(apiError.code), req.tenant);
    if (apiError.code === 'rate_limited' || apiError.code === 'idempotency_in_flight') reply.header('Retry-After', String(apiError.retryAfter ?? 1));
    // A store that cannot serve now (failing open, a full disk): the producer retries, not at once.
    if (apiError.code === 'unavailable' || apiError.code === 'shutting_down')
      reply.header('Retry-After', String(apiError.retryAfter ?? UNAVAILABLE_RETRY_AFTER_S));
    if (apiError.code === 'unauthorized') reply.header('WWW-Authenticate', 'Bearer');
    // The exceptions to the error shape: the drop-in APIs answer as PagerDuty and Opsgenie do.
    const route = req.routeOptions.url;
    return reply
      .code(apiError.status)
      .send(
        route === ENQUEUE
          ? pagerdutyError(apiError)
          : route !== undefined && OPSGENIE_ROUTES.has(route)
            ? opsgenieError(apiError, req, reply)
            : errorBody(apiError),
      );
  });

  app.setNotFoundHandler((req, reply) => {
    const e = new ApiError('not_found', `no route for ${req.method} ${req.url.split('?')[0]}`);
    metrics.rejected.labels('unmatched', e.code).inc();
    return reply.code(404).send(errorBody(e));
  });

  operationRoutes(app, dedup.store, metrics, storeResetAt);
  // Producers' Idempotency-Keys: after access (the tenant is known), before any route runs.
  idempotency(app, dedup.store.requests, config);
  // Batches: NDJSON on the three routes that decide one input; each line costs its tenant a token.
  const { batch_lines, batch_bytes } = config().limits;
  ndjsonParser(app, new Set(['/v1/incidents', '/v1/events', '/v1/violations']), { lines: batch_lines, bytes: batch_bytes });
  const charge: ChargeItems = (req, n) => chargeItems(req, config(), limiter, n);
  incidentRoutes(app, dedup, charge);
  historyRoutes(app, history);
  eventRoutes(app, events, accounting, charge);
  violationRoutes(app, violations, charge);
  deadLetterRoutes(app, deliveries, history.recorder);
  enqueueRoutes(app, dropIns.pagerduty, config, limiter);
  opsgenieAlertRoutes(app, dropIns.opsgenie, history);
  alertmanagerRoutes(app, dropIns.alertmanager, config, limiter);
  heartbeatRoutes(app, heartbeats);
  groupRoutes(app, groups);
  routeTestRoutes(app, config);
  dashboardRoutes(app, { dedup, tally, deliveryTally, events, accounting, deliveries, silences, clock, heartbeats }, config, dashboardIntervalMs);
  auditRoutes(app, dedup.store);
  silenceRoutes(app, dedup.store.silences, silences, clock, config);
  alertmanagerApiRoutes(app, { dedup, mutes: mutes ?? silences, clock, config, startedAt: clock.now() });
  openApiRoutes(app, () => routes.filter((r): r is DocumentedRoute => r.doc !== undefined));
  return app;
}

/**
 * Ids for requests that bring none: this process's random prefix and a
 * count, unique across replicas and restarts like a UUID, for a fraction of
 * a random UUID's cost per request.
 */
export function requestIds(): () => string {
  const prefix = randomBytes(8).toString('hex');
  let n = 0;
  return () => `${prefix}-${(++n).toString(36)}`;
}

/** The route pattern (never the raw URL, which would carry keys into labels). */
function routeLabel(pattern: string | undefined): string {
  return pattern ?? 'unmatched';
}
