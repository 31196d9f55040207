import type { FastifyInstance } from 'fastify';
import { stringify } from 'yaml';
import type { Config } from '../../config/schema.js';
import type { Clock } from '../../core/clock.js';
import type { CompiledMatcher, Labels } from '../../core/matcher.js';
import { COMMIT, VERSION } from '../../core/version.js';
import type { Deduplicator } from '../../engine/deduplicator.js';
import { incidentView } from '../../engine/views.js';
import { ALERTMANAGER_KEY_PREFIX, isAlertmanagerKey } from '../../inputs/store-key.js';
import type { MuteSource } from '../../mute/mutes.js';
import { ApiError } from '../errors.js';
import { doc } from '../openapi/route-doc.js';
import { object } from '../openapi/schemas.js';
import { parseFilter } from './silences.js';

/** The most live incidents one query lists (amtool shows a table; a tenant's whole live set can be large). */
const ALERTS_LISTED = 1000;
const STATES = ['active', 'silenced', 'inhibited', 'unprocessed'] as const;
/** Config fields whose values are secrets: masked wherever the running config is shown. */
const SECRET_FIELD = /token|password|secret|routing_key|api_key|credentials|authorization/i;

/** `true`/`false` as amtool sends them; absent: `otherwise`. */
function flag(query: Record<string, unknown>, name: string, otherwise: boolean): boolean {
  const v = query[name];
  if (v === undefined) return otherwise;
  if (v === 'true' || v === 'false') return v === 'true';
  throw new ApiError('invalid_input', `${name} must be true or false`, [{ path: name, message: 'must be true or false' }]);
}

/** The running config as YAML, every secret masked (by field name, and the password of any URL). */
export function maskedConfigYaml(config: Config): string {
  const mask = (v: unknown, key: string): unknown => {
    if (typeof v === 'string') return SECRET_FIELD.test(key) ? '<secret>' : v.replace(/^([a-z+]+:\/\/[^:/@]+):[^@/]*@/i, '$1:<secret>@');
    if (Array.isArray(v)) return SECRET_FIELD.test(key) ? v.map(() => '<secret>') : v.map((x) => mask(x, key));
    if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, mask(x, k)]));
    return v;
  };
  return stringify(mask(config, ''));
}

/**
 * The rest of Alertmanager's API v2 that amtool reads, so that `amtool
 * --alertmanager.url=<onceonly>` works for more than silences: `GET
 * /api/v2/alerts` lists the tenant's live incidents as Alertmanager lists
 * alerts (labels, state, silenced or inhibited by what), and `GET
 * /api/v2/status` answers `amtool config show` with the running config,
 * secrets masked (on a server with tenants, not at all: it is the
 * operator's, and a tenant's token must not read other tenants' routes).
 */
export function alertmanagerApiRoutes(
  app: FastifyInstance,
  o: { dedup: Deduplicator; mutes: MuteSource; clock: Clock; config: () => Config; startedAt: number },
): void {
  app.get<{ Querystring: Record<string, unknown> }>(
    '/api/v2/alerts',
    doc({
      summary: "The caller's live incidents as Alertmanager lists alerts: what `amtool alert query` reads",
      access: 'tenant',
      tag: 'drop-in',
      query: {
        filter: { description: 'a matcher in text form; repeat for AND', schema: { type: 'string' } },
        active: { description: 'list those nothing mutes (default true)', schema: { type: 'boolean' } },
        silenced: { description: 'list those a silence or maintenance window mutes (default true)', schema: { type: 'boolean' } },
        inhibited: { description: 'list those inhibited (default true)', schema: { type: 'boolean' } },
        unprocessed: { description: 'accepted for amtool; onceonly has no unprocessed alerts', schema: { type: 'boolean' } },
        receiver: { description: 'a regex the adapter names are matched by', schema: { type: 'string' } },
      },
      responses: { 200: { description: 'alerts', schema: { type: 'array', items: object } } },
    }),
    async (req) => {
      const filter: CompiledMatcher[] = parseFilter(req.query, o.config().limits.regex_cost_per_matcher, [...STATES, 'receiver']);
      const want = { active: flag(req.query, 'active', true), silenced: flag(req.query, 'silenced', true), inhibited: flag(req.query, 'inhibited', true) };
      flag(req.query, 'unprocessed', true);
      // `receiver` is a regex over the adapter names: read as the matcher `receiver=~"…"`, under the same cost bound.
      let receiver: CompiledMatcher | null = null;
      if (req.query.receiver !== undefined) {
        const r = req.query.receiver;
        if (typeof r !== 'string' || r.length > 256)
          throw new ApiError('invalid_input', 'receiver is a regex of at most 256 characters', [{ path: 'receiver', message: 'not a regex' }]);
        receiver = parseFilter({ filter: `receiver=~${JSON.stringify(r)}` }, o.config().limits.regex_cost_per_matcher)[0]!;
      }
      const now = o.clock.now();
      const adapters = o.config().adapters.map((a) => a.name);
      const out: unknown[] = [];
      for (const rec of await o.dedup.store.queries.listIncidents(req.tenant, ALERTS_LISTED)) {
        const view = incidentView(rec);
        const alertish = isAlertmanagerKey(rec.key);
        const labels: Record<string, string> = alertish
          ? { ...view.labels }
          : {
              ...view.labels,
              ...(view.element_id !== undefined ? { element_id: view.element_id, fault_class: view.fault_class!, root_cause_id: view.root_cause_id! } : {}),
              severity: view.severity,
            };
        if (!filter.every((f) => f.test(labels))) continue;
        const receivers = rec.route ? [...rec.route] : adapters;
        if (receiver && !receivers.some((name) => receiver!.test({ receiver: name }))) continue;
        const seen: Labels = { ...labels, oo_severity: view.severity, kind: 'incident', dedup_key: rec.key, tenant: req.tenant };
        const muted = await o.mutes.mutedBy(req.tenant, seen, now, rec.key);
        const state = muted ? 'suppressed' : 'active';
        if (muted ? (muted.by === 'inhibition' ? !want.inhibited : !want.silenced) : !want.active) continue;
        out.push({
          labels,
          annotations: view.summary ? { summary: view.summary } : {},
          receivers: receivers.map((name) => ({ name })),
          fingerprint: alertish ? rec.key.slice(ALERTMANAGER_KEY_PREFIX.length) : rec.key,
          startsAt: view.created_at,
          updatedAt: view.last_seen_at,
          endsAt: view.expires_at,
          status: {
            state,
            silencedBy: muted?.by === 'silence' ? [muted.id] : [],
            inhibitedBy: muted?.by === 'inhibition' ? [muted.id] : [],
            mutedBy: muted?.by === 'maintenance' ? [muted.id] : [],
          },
        });
      }
      return out;
    },
  );

  app.get(
    '/api/v2/status',
    doc({
      summary: 'What `amtool config show` reads: the version, and the running config with every secret masked (only on a server without tenants)',
      access: 'tenant',
      tag: 'drop-in',
      responses: { 200: { description: 'status', schema: object } },
    }),
    async () => {
      const config = o.config();
      return {
        cluster: { status: 'disabled', peers: [] },
        versionInfo: { version: VERSION, revision: COMMIT, branch: '', buildUser: 'onceonly', buildDate: '', goVersion: process.version },
        config: {
          original:
            config.tenants.length > 0
              ? "# onceonly: the running config is shown only on a server without tenants (it is the operator's, not a tenant's)\n"
              : maskedConfigYaml(config),
        },
        uptime: new Date(o.startedAt).toISOString(),
      };
    },
  );
}
