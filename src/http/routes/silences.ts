import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { Config } from '../../config/schema.js';
import type { Clock } from '../../core/clock.js';
import { type CompiledMatcher, MatcherError, matcherCost, parseMatcher } from '../../core/matcher.js';
import type { SilenceCache } from '../../mute/silence-cache.js';
import { parseSilence, postableSilenceSchema } from '../../mute/silence-input.js';
import { type Silence, type SilenceStore, silenceState } from '../../store/contract/index.js';
import { ApiError } from '../errors.js';
import { doc } from '../openapi/route-doc.js';
import { errorBody, object } from '../openapi/schemas.js';

/** Alertmanager API v2's GettableSilence. */
export function silenceView(s: Silence, now: number) {
  return {
    id: s.id,
    status: { state: silenceState(s, now) },
    updatedAt: new Date(s.updatedAt).toISOString(),
    matchers: s.matchers.map(({ name, value, isRegex, isEqual }) => ({ name, value, isRegex, isEqual })),
    startsAt: new Date(s.startsAt).toISOString(),
    endsAt: new Date(s.endsAt).toISOString(),
    createdBy: s.createdBy,
    comment: s.comment,
  };
}

/** The silence id in a path: a UUID as this server makes them (anything else cannot exist). */
const SILENCE_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

function assertId(id: string): void {
  if (!SILENCE_ID.test(id)) throw new ApiError('invalid_input', 'a silence id is a UUID', [{ path: 'silenceID', message: 'must be a UUID' }]);
}

/**
 * `filter` as amtool sends it: matchers in text form; a silence is listed when
 * each filter matcher matches one of its matchers of the same name (by value).
 */
export function parseFilter(query: Record<string, unknown>, maxRegexCost: number, others: readonly string[] = []): CompiledMatcher[] {
  const unknown = Object.keys(query).filter((k) => k !== 'filter' && !others.includes(k));
  if (unknown.length > 0) {
    throw new ApiError('invalid_input', `unknown query parameter ${JSON.stringify(unknown[0])}`, [
      { path: unknown[0]!, message: `unknown query parameter (known: ${['filter', ...others].join(', ')})` },
    ]);
  }
  const raw = query.filter === undefined ? [] : [query.filter].flat();
  if (raw.length > 64) throw new ApiError('invalid_input', 'at most 64 filter matchers', [{ path: 'filter', message: 'at most 64' }]);
  return raw.map((f, i) => {
    if (typeof f !== 'string' || f.length > 4096)
      throw new ApiError('invalid_input', 'a filter is one matcher in text form', [{ path: `filter.${i}`, message: 'not a matcher' }]);
    try {
      return parseMatcher(f, { maxRegexCost });
    } catch (err) {
      throw new ApiError('invalid_input', `invalid filter: ${err instanceof MatcherError ? err.message : String(err)}`, [
        { path: `filter.${i}`, message: 'not a matcher' },
      ]);
    }
  });
}

const filtered = (s: Silence, filter: readonly CompiledMatcher[]) =>
  filter.every((f) => s.matchers.some((m) => m.name === f.name && f.test({ [f.name]: m.value })));

/**
 * Silences, speaking Alertmanager's API v2 so that `amtool
 * --alertmanager.url=<onceonly>` works unchanged; scoped to the caller's
 * tenant. A write reloads this replica's copy at once; the others see the
 * version move within their poll.
 */
export function silenceRoutes(app: FastifyInstance, store: SilenceStore, cache: SilenceCache, clock: Clock, config: () => Config): void {
  app.post(
    '/api/v2/silences',
    doc({
      summary: 'Create a silence, or update one by its `id` (Alertmanager API v2, as amtool sends it)',
      description:
        'Matchers name the input fields (`element_id`, `fault_class`, `root_cause_id`, `severity`, `process_id`, `rule_id`, `alarm_code`, `device_id`, `state`, `source`, `component`, `group`, `class`), Alertmanager labels, and `kind`. Regexes are RE2, anchored. At least one matcher must not match the empty string. Updating an ended silence makes a new one, as Alertmanager does.',
      access: 'tenant',
      tag: 'noise',
      body: postableSilenceSchema,
      responses: {
        200: { description: 'the silence id', schema: { type: 'object', properties: { silenceID: { type: 'string' } } } },
        404: { description: 'no silence with that id', schema: errorBody },
        409: {
          description:
            "the tenant already has limits.silences_per_tenant (1,000) silences that have not ended, or their regexes' cost would pass limits.regex_cost_per_tenant",
          schema: errorBody,
        },
      },
    }),
    async (req) => {
      const now = clock.now();
      const limits = config().limits;
      const input = parseSilence(req.body, now, { maxRegexCost: limits.regex_cost_per_matcher, maxChars: limits.silence_chars });
      const cost = input.matchers.reduce((sum, m) => sum + matcherCost(m), 0);
      const held = cache.regexCost(req.tenant, now, input.id);
      if (cost > 0 && held + cost > limits.regex_cost_per_tenant) {
        throw new ApiError(
          'limit_reached',
          `this tenant's silences that have not ended hold regexes of cost ${held}; this one adds ${cost}, past ${limits.regex_cost_per_tenant} (limits.regex_cost_per_tenant): expire some first, or use fewer or simpler regexes`,
        );
      }
      const fields = {
        tenant: req.tenant,
        matchers: input.matchers,
        startsAt: input.startsAt,
        endsAt: input.endsAt,
        createdBy: input.createdBy,
        comment: input.comment,
        updatedAt: now,
      };
      let id = input.id;
      if (id !== undefined) {
        assertId(id);
        const r = await store.update({ id, ...fields }, now, { requestId: req.id });
        if (r === 'absent') throw new ApiError('not_found', `no silence ${JSON.stringify(id)}`);
        if (r === 'expired') id = undefined;
      }
      if (id === undefined) {
        id = randomUUID();
        const bounds = { open: limits.silences_per_tenant, ended: limits.ended_silences_per_tenant };
        if (!(await store.create({ id, ...fields }, bounds, now, { requestId: req.id }))) {
          throw new ApiError(
            'limit_reached',
            `this tenant already has ${bounds.open} silences that have not ended (limits.silences_per_tenant): expire some first`,
          );
        }
      }
      await cache.refresh();
      return { silenceID: id };
    },
  );

  app.get<{ Querystring: Record<string, unknown> }>(
    '/api/v2/silences',
    doc({
      summary: "The caller's silences, active, pending and expired (kept 120 h after they end)",
      access: 'tenant',
      tag: 'noise',
      query: { filter: { description: 'a matcher in text form (`name="value"`, `=~`, `!=`, `!~`); repeat for AND', schema: { type: 'string' } } },
      responses: { 200: { description: 'silences', schema: { type: 'array', items: object } } },
    }),
    async (req) => {
      const filter = parseFilter(req.query, config().limits.regex_cost_per_matcher);
      const now = clock.now();
      return (await store.list(req.tenant)).filter((s) => filtered(s, filter)).map((s) => silenceView(s, now));
    },
  );

  app.get<{ Params: { id: string } }>(
    '/api/v2/silence/:id',
    doc({
      summary: 'One silence',
      access: 'tenant',
      tag: 'noise',
      params: { id: 'the silence id' },
      responses: { 200: { description: 'the silence', schema: object }, 404: { description: 'no such silence', schema: errorBody } },
    }),
    async (req) => {
      assertId(req.params.id);
      const s = await store.get(req.tenant, req.params.id);
      if (!s) throw new ApiError('not_found', `no silence ${JSON.stringify(req.params.id)}`);
      return silenceView(s, clock.now());
    },
  );

  app.delete<{ Params: { id: string } }>(
    '/api/v2/silence/:id',
    doc({
      summary: 'Expire a silence now (an ended one stays as it is); what it held is released',
      access: 'tenant',
      tag: 'noise',
      params: { id: 'the silence id' },
      responses: { 200: { description: 'expired' }, 404: { description: 'no such silence', schema: errorBody } },
    }),
    async (req, reply) => {
      assertId(req.params.id);
      if (!(await store.expire(req.tenant, req.params.id, clock.now(), { requestId: req.id })))
        throw new ApiError('not_found', `no silence ${JSON.stringify(req.params.id)}`);
      await cache.refresh();
      return reply.code(200).send();
    },
  );
}
