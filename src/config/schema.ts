import { z } from 'zod';
import { SEVERITIES } from '../core/fingerprint.js';
import { adaptersConfig, lookupsConfig } from './adapters.js';
import { tenantsConfig } from '../access/tenants.js';
import { maintenanceConfig } from './maintenance.js';
import { inhibitionConfig } from './inhibition.js';
import { heartbeatsConfig } from './heartbeats.js';
import { autoPauseConfig, flappingConfig, groupingConfig } from './holds.js';
import { redisConfig } from './redis.js';
import { ingestConfig } from './ingest.js';
import { routeConfig, routeEscalationTargets, routeMatchersNamed, routeReceiversNamed } from './route.js';
import { matcherCost, matcherOf } from '../core/matcher.js';

/**
 * The configuration file's schema: the one place config is declared; its
 * types come from here. Every field is optional; unknown fields are errors so
 * a typo never silently means "default".
 */

const positiveInt = z.number().int().positive();

const classification = z.strictObject({
  alarm_code: z.string().min(1).max(64),
  severity: z.enum(SEVERITIES, { message: `must be one of ${SEVERITIES.join(', ')}` }),
});

const action = z.strictObject({ route: z.boolean(), notify: z.boolean() });

/**
 * `forever` is ledger mode (a permanent, auditable uniqueness
 * decision): identities of that input never expire, and on Postgres every
 * decision of it is appended to the audit trail. `ttl` (default): they live
 * their TTL, window or retention.
 */
const retention = z.enum(['ttl', 'forever']).default('ttl');

/** How long "forever" is for a store that needs a number: a hundred years. */
export const FOREVER_MS = 100 * 365 * 86_400_000;

/** An incident's lifetime when no per-class TTL applies (the drop-in inputs): `incidents.ttl_seconds`, or forever in ledger mode. */
export const incidentLifetimeMs = (incidents: { retention: 'ttl' | 'forever'; ttl_seconds: number }): number =>
  incidents.retention === 'forever' ? FOREVER_MS : incidents.ttl_seconds * 1000;

/** The default rule table: each control-chart rule's alarm code and severity. */
const DEFAULT_RULES = {
  nelson_1: { alarm_code: 'SPC-BEYOND-3S', severity: 'CRITICAL' as const },
  nelson_2: { alarm_code: 'SPC-SHIFT-9', severity: 'MAJOR' as const },
  nelson_3: { alarm_code: 'SPC-TREND-6', severity: 'MAJOR' as const },
  we_zone_a: { alarm_code: 'SPC-2OF3-2S', severity: 'MAJOR' as const },
  we_zone_b: { alarm_code: 'SPC-4OF5-1S', severity: 'MINOR' as const },
};

/** CRITICAL routes and pages; MAJOR and MINOR route without paging; INFO only logs. */
const DEFAULT_ACTIONS = {
  CRITICAL: { route: true, notify: true },
  MAJOR: { route: true, notify: false },
  MINOR: { route: true, notify: false },
  INFO: { route: false, notify: false },
};

const ttlOverride = z
  .strictObject({
    fault_class: z.string().min(1).optional(),
    element_prefix: z.string().min(1).optional(),
    ttl_seconds: positiveInt,
  })
  .refine((o) => (o.fault_class === undefined) !== (o.element_prefix === undefined), {
    message: 'give exactly one of fault_class or element_prefix',
  });

/** The default of every bound in `limits` (the table in docs/security.md, "Bounds"). */
export const LIMIT_DEFAULTS = {
  regex_cost_per_matcher: 2_500,
  regex_cost_per_tenant: 20_000,
  idempotency_keys_per_tenant: 100_000,
  idempotency_bytes_per_tenant: 67_108_864,
  idempotency_answer_bytes: 1_048_576,
  body_bytes: 524_288,
  batch_lines: 10_000,
  batch_bytes: 16_777_216,
  alerts_per_post: 1_000,
  silences_per_tenant: 1_000,
  ended_silences_per_tenant: 1_000,
  silence_chars: 16_384,
  dashboard_streams: 64,
  dashboard_streams_per_tenant: 8,
  dashboard_unsent_bytes: 1_048_576,
  rate_limit_buckets: 100_000,
};

export const configSchema = z
  .strictObject({
    incidents: z
      .strictObject({
        ttl_seconds: positiveInt.default(3600),
        /**
         * The most a SUPPRESS can come after its CREATE and still be reported as
         * `lost_race` (a copy that raced the claim: engine/race-watch.ts) rather than `unchanged`.
         */
        race_window_ms: z.number().int().nonnegative().default(1000),
        /** First match wins: a shorter window for flap-prone tiers. */
        ttl_overrides: z.array(ttlOverride).default([]),
        /**
         * An expired incident that was never closed is kept this long, so the next
         * arrival is reported as CREATE/expired (a premature expiry). Read at start.
         */
        expired_grace_seconds: z.number().int().nonnegative().default(600),
        retention,
      })
      .prefault({}),
    /**
     * Redis and Redis Cluster: how many hash-tag shards the keys are spread over. Part of
     * the stored layout: every replica must use the same count, and changing it moves
     * the keys (docs/scaling.md). Read at start.
     */
    redis: redisConfig,
    /** Shared stores (Redis, Postgres): when to stop waiting and decide locally (docs/operations.md). Read at start. */
    failopen: z
      .strictObject({
        /** a decision's deadline, in the store's own time (the replica's stalls do not count); unset: 50 ms on Redis, 300 ms on Postgres */
        timeout_ms: positiveInt.optional(),
        /** failures in a row (the late decision, then probes a timeout apart) before the replica fails open */
        fail_after: z.number().int().min(1).max(20).default(3),
        /** healthy probes in a row before a degraded replica replays its journal and goes back */
        recover_after: z.number().int().min(1).max(20).default(3),
        /** a list, count or other call with no local answer, or a decision the answering store is slow for, fails alone after this */
        operation_timeout_ms: positiveInt.default(5000),
        probe_interval_ms: positiveInt.default(250),
        /** unset: ./data/onceonly-journal-<port>.db, one per replica (store/failopen/journal-path.ts) */
        journal_path: z.string().min(1).optional(),
      })
      .prefault({}),
    violations: z
      .strictObject({
        window_seconds: positiveInt.default(300),
        retention,
        /** rule_id → alarm code and severity; replaces the default table when given. */
        rules: z.record(z.string().min(1), classification).default(DEFAULT_RULES),
        /** any rule not in `rules` */
        unknown_rule: classification.default({ alarm_code: 'SPC-UNKNOWN', severity: 'MINOR' }),
        /** the decision table: by severity, whether a new alarm is routed to ticketing and whether it pages */
        actions: z
          .strictObject(Object.fromEntries(SEVERITIES.map((s) => [s, action.optional()])) as Record<(typeof SEVERITIES)[number], z.ZodOptional<typeof action>>)
          // prefault: an absent table is parsed as {} so the transform fills in the defaults
          .prefault({})
          .transform(
            (given) =>
              ({ ...DEFAULT_ACTIONS, ...Object.fromEntries(Object.entries(given).filter(([, v]) => v !== undefined)) }) as Record<
                (typeof SEVERITIES)[number],
                { route: boolean; notify: boolean }
              >,
          ),
      })
      .prefault({}),
    /**
     * Alerts from Alertmanager's webhook. A firing alert is re-sent only every
     * repeat_interval (4 h by default), so their TTL is longer than incidents':
     * keep it above repeat_interval, or a re-send after expiry opens a second ticket.
     */
    alertmanager: z.strictObject({ ttl_seconds: positiveInt.default(86_400) }).prefault({}),
    events: z
      .strictObject({
        retention_seconds: positiveInt.default(86400),
        stale_after_seconds: positiveInt.default(300),
        retention,
      })
      .prefault({}),
    /**
     * Capped, jittered exponential backoff: retry i (from 0) waits min(max_delay_ms, base_delay_ms · 2^i) · (1 + U[0, 0.25)).
     * The defaults ride out an hour-long outage of a destination (a maintenance window): 23 retries wait
     * 0.5, 1, … 128 s, then 240 s fourteen times, 3,615.5 s at the least and 4,519 s at the most, no wait over 300 s.
     */
    delivery: z
      .strictObject({
        max_retries: z.number().int().nonnegative().default(23),
        base_delay_ms: positiveInt.default(500),
        max_delay_ms: positiveInt.default(240_000),
        /**
         * how long a worker holds a delivery before another replica may take it over (outlast every adapter's
         * timeout_ms): short, so a dead replica's deliveries are taken over within seconds; a call that could
         * outlast what is left of it renews it first. Read at start.
         */
        lease_ms: positiveInt.default(15_000),
        /** how long a dead letter is kept for a person to see and retry; then the sweep deletes it */
        dead_letter_retention_days: positiveInt.default(14),
      })
      .prefault({})
      .refine((d) => d.max_delay_ms >= d.base_delay_ms, { message: 'max_delay_ms must be at least base_delay_ms', path: ['max_delay_ms'] }),
    /** Where decisions are delivered; each type's fields are declared beside its code (src/delivery/adapters). */
    adapters: adaptersConfig,
    /** Tables the adapters' field templates read: `{{ lookups.<table>[<value>] }}` (docs/routing.md). */
    lookups: lookupsConfig,
    /** Maintenance windows in Alertmanager's time_intervals syntax: matching keys are muted while one is in force (docs/noise.md). */
    maintenance: maintenanceConfig,
    /** Alertmanager's inhibit_rules: a live source incident mutes matching targets with the same `equal` values (docs/noise.md). */
    inhibit_rules: inhibitionConfig,
    /**
     * Alertmanager's routing tree with adapter names as receivers: which adapters take a key
     * (docs/routing.md). A key's create is routed by it (delivery/routing.ts) and the store keeps
     * the route with the key, so its later changes go where the create went.
     */
    route: routeConfig,
    /** Dead-man's switches: an incident when a ping is overdue, closed by the next ping (docs/noise.md). */
    heartbeats: heartbeatsConfig,
    /** Creates of matching keys held a while; a key that closes meanwhile delivers nothing (docs/noise.md). */
    auto_pause: autoPauseConfig,
    /** Keys that keep closing and opening again are held until they settle (docs/noise.md). */
    flapping: flappingConfig,
    /** Incidents sharing the `by` labels go to `grouped` adapters as one group (docs/noise.md). */
    grouping: groupingConfig,
    /** With tenants, every route but the open ones needs a tenant's bearer token (docs/api.md, "Access"). */
    tenants: tenantsConfig,
    /**
     * Without tenants, the host names (besides localhost, 127.0.0.1 and [::1])
     * a request's Host may carry; any other answers 403, so a web page cannot
     * reach the API by DNS rebinding. Names, lower case, no port.
     */
    allowed_hosts: z
      .array(z.string().regex(/^[a-z0-9.-]{1,253}$|^\[[0-9a-f:.]+\]$/, 'must be a host name or a bracketed IPv6 address, lower case, without a port'))
      .default([]),
    /**
     * /metrics is open to anyone who reaches the port: by default no series
     * names a tenant or a heartbeat. `tenant_labels: true` labels the heartbeat
     * gauges by tenant and heartbeat (put /metrics behind the network's own rule then).
     */
    metrics: z.strictObject({ tenant_labels: z.boolean().default(false) }).prefault({}),
    /**
     * Each key's history (GET /v1/incidents/{key}/history, `onceonly explain`, docs/history.md):
     * at most `max_events` per key, the oldest dropped first (0 keeps none), each kept
     * `retention_seconds` after its last time, past the key's own close or expiry.
     */
    history: z
      .strictObject({
        max_events: z.number().int().min(0).max(10_000).default(500),
        retention_seconds: z
          .number()
          .int()
          .min(60)
          .max(31_536_000)
          .default(7 * 86_400),
        /**
         * Bytes one tenant's histories may hold at once, every key together (their stored
         * events); an event past it is not kept (onceonly_history_dropped_total{reason="tenant_bytes"})
         * until retention or the per-key bound frees room. On Redis each shard keeps its share.
         */
        max_bytes_per_tenant: z.number().int().min(1_048_576).max(1_099_511_627_776).default(1_073_741_824),
      })
      .prefault({}),
    /**
     * Bounds on what a tenant's input may cost every replica (docs/security.md, "Bounds").
     * A regex's cost is the estimated size of the program RE2 compiles it to: compiling
     * costs that once per replica and reload, and matching costs it per character.
     */
    limits: z
      .strictObject({
        /** one silence or filter matcher's regex (`.{0,1000}` is about 2,000) */
        regex_cost_per_matcher: z.number().int().min(10).max(100_000).default(LIMIT_DEFAULTS.regex_cost_per_matcher),
        /** every regex of a tenant's silences that have not ended, together */
        regex_cost_per_tenant: z.number().int().min(10).max(10_000_000).default(LIMIT_DEFAULTS.regex_cost_per_tenant),
        /** Idempotency-Keys a tenant's records hold at once (until they expire); past it a new key is refused 429 */
        idempotency_keys_per_tenant: z.number().int().min(1).max(10_000_000).default(LIMIT_DEFAULTS.idempotency_keys_per_tenant),
        /** bytes of kept answers a tenant holds at once; an answer past it is kept as its status and SHA-256 only */
        idempotency_bytes_per_tenant: z.number().int().min(1_024).max(10_000_000_000).default(LIMIT_DEFAULTS.idempotency_bytes_per_tenant),
        /** one kept answer's bytes; a longer one is kept as its status and SHA-256 only */
        idempotency_answer_bytes: z.number().int().min(256).max(16_777_216).default(LIMIT_DEFAULTS.idempotency_answer_bytes),
        /** a JSON request body's bytes; past it 413. Read at start. */
        body_bytes: z.number().int().min(16_384).max(67_108_864).default(LIMIT_DEFAULTS.body_bytes),
        /** an NDJSON batch's lines and bytes; past either 413. Read at start. */
        batch_lines: z.number().int().min(1).max(1_000_000).default(LIMIT_DEFAULTS.batch_lines),
        batch_bytes: z.number().int().min(16_384).max(1_073_741_824).default(LIMIT_DEFAULTS.batch_bytes),
        /** alerts in one Alertmanager post (each also one rate-limit token); past it 413 */
        alerts_per_post: z.number().int().min(1).max(100_000).default(LIMIT_DEFAULTS.alerts_per_post),
        /** silences a tenant has that have not ended; a new one past it is 409 */
        silences_per_tenant: z.number().int().min(1).max(100_000).default(LIMIT_DEFAULTS.silences_per_tenant),
        /** ended silences a tenant keeps (120 h); a create deletes its oldest-ended past it */
        ended_silences_per_tenant: z.number().int().min(0).max(100_000).default(LIMIT_DEFAULTS.ended_silences_per_tenant),
        /** characters of one silence's matchers, createdBy and comment together; past it 400 */
        silence_chars: z.number().int().min(1_024).max(1_048_576).default(LIMIT_DEFAULTS.silence_chars),
        /** dashboard streams a replica serves, and a tenant holds; past either 429 */
        dashboard_streams: z.number().int().min(1).max(10_000).default(LIMIT_DEFAULTS.dashboard_streams),
        dashboard_streams_per_tenant: z.number().int().min(1).max(10_000).default(LIMIT_DEFAULTS.dashboard_streams_per_tenant),
        /** bytes a dashboard stream may leave unsent before it is dropped */
        dashboard_unsent_bytes: z.number().int().min(65_536).max(268_435_456).default(LIMIT_DEFAULTS.dashboard_unsent_bytes),
        /** rate-limit buckets a replica keeps (client addresses for wrong tokens); past it the oldest full one goes. Read at start. */
        rate_limit_buckets: z.number().int().min(100).max(10_000_000).default(LIMIT_DEFAULTS.rate_limit_buckets),
      })
      .default(LIMIT_DEFAULTS),
    /**
     * How long a client may take to send a request: its headers, and the whole
     * request with its body. Past either the connection is answered 408 and
     * closed, so a client that dribbles a body holds nothing open for long. Read at start.
     */
    http: z
      .strictObject({
        headers_timeout_ms: z.number().int().min(100).max(600_000).default(10_000),
        request_timeout_ms: z.number().int().min(100).max(3_600_000).default(60_000),
      })
      .refine((h) => h.headers_timeout_ms <= h.request_timeout_ms, {
        message: 'headers_timeout_ms must not be longer than request_timeout_ms',
        path: ['headers_timeout_ms'],
      })
      .prefault({}),
    /** Inputs taken from a broker as well as over HTTP (docs/ingest.md). Read at start. */
    ingest: ingestConfig,
  })
  .superRefine((c, ctx) => {
    // A lease shorter than a call would let a second worker deliver while the first still waits.
    c.adapters.forEach((a, i) => {
      if (a.timeout_ms >= c.delivery.lease_ms) {
        ctx.addIssue({ code: 'custom', path: ['adapters', i, 'timeout_ms'], message: `must be shorter than delivery.lease_ms (${c.delivery.lease_ms})` });
      }
    });
    // The routing tree runs on every create: its regexes are held to the silences' budget, each matcher to
    // limits.regex_cost_per_matcher and the whole tree to limits.regex_cost_per_tenant.
    if (c.route) {
      let total = 0;
      for (const { matcher, path } of routeMatchersNamed(c.route)) {
        let cost: number;
        try {
          cost = matcherCost(matcherOf(matcher));
        } catch {
          continue; // a matcher that does not parse is named by the matcher list's own check
        }
        total += cost;
        if (cost > c.limits.regex_cost_per_matcher)
          ctx.addIssue({
            code: 'custom',
            path,
            message: `the regex would compile to about ${cost} instructions; at most ${c.limits.regex_cost_per_matcher} (limits.regex_cost_per_matcher)`,
          });
      }
      if (total > c.limits.regex_cost_per_tenant)
        ctx.addIssue({
          code: 'custom',
          path: ['route'],
          message: `the tree's regexes would compile to about ${total} instructions in all; at most ${c.limits.regex_cost_per_tenant} (limits.regex_cost_per_tenant)`,
        });
    }
    // Every receiver of the routing tree is a configured adapter.
    if (c.route) {
      const adapters = new Set(c.adapters.map((a) => a.name));
      for (const { receiver, path } of routeReceiversNamed(c.route)) {
        if (!adapters.has(receiver)) ctx.addIssue({ code: 'custom', path, message: `no adapter named ${JSON.stringify(receiver)} is configured` });
      }
      for (const { adapter, path } of routeEscalationTargets(c.route)) {
        if (!adapters.has(adapter)) ctx.addIssue({ code: 'custom', path, message: `no adapter named ${JSON.stringify(adapter)} is configured` });
      }
    }
    // A heartbeat belongs to one tenant: the one its pings authenticate as.
    const tenants = new Set(c.tenants.map((t) => t.id));
    // What a broker brings in belongs to one tenant, as a request belongs to its token's.
    for (const source of ['mqtt', 'nats'] as const) {
      const given = c.ingest[source];
      if (!given) continue;
      const path = ['ingest', source, 'tenant'];
      if (tenants.size > 0 && (given.tenant === undefined || !tenants.has(given.tenant)))
        ctx.addIssue({
          code: 'custom',
          path,
          message:
            given.tenant === undefined
              ? 'required once tenants are configured: the tenant the messages belong to'
              : `no tenant ${JSON.stringify(given.tenant)} is configured`,
        });
      if (tenants.size === 0 && given.tenant !== undefined && given.tenant !== 'default')
        ctx.addIssue({ code: 'custom', path, message: 'no tenants are configured: leave tenant out (or give "default")' });
    }
    const seen = new Set<string>();
    c.heartbeats.forEach((h, i) => {
      if (tenants.size === 0 && h.tenant !== undefined && h.tenant !== 'default') {
        ctx.addIssue({ code: 'custom', path: ['heartbeats', i, 'tenant'], message: 'no tenants are configured: leave tenant out (or give "default")' });
      } else if (tenants.size > 0 && h.tenant === undefined) {
        ctx.addIssue({ code: 'custom', path: ['heartbeats', i, 'tenant'], message: 'required once tenants are configured: the tenant whose token pings it' });
      } else if (tenants.size > 0 && !tenants.has(h.tenant!)) {
        ctx.addIssue({ code: 'custom', path: ['heartbeats', i, 'tenant'], message: `no tenant ${JSON.stringify(h.tenant)} is configured` });
      }
      const id = `${h.tenant ?? 'default'}\u0000${h.name}`;
      if (seen.has(id))
        ctx.addIssue({ code: 'custom', path: ['heartbeats', i, 'name'], message: `heartbeat ${JSON.stringify(h.name)} is configured twice for this tenant` });
      seen.add(id);
    });
  });

export type Config = z.output<typeof configSchema>;
export type ConfigInput = z.input<typeof configSchema>;

export const defaultConfig: Config = configSchema.parse({});
