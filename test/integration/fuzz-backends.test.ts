// biome-ignore-all lint/suspicious/noTemplateCurlyInString: a config secret reference is one of the hostile strings sent.
// needs: redis
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { writeFileSync } from 'node:fs';
import fc from 'fast-check';
import { pino } from 'pino';
import { startServer, type RunningServer } from '../../src/app/start.js';
import { startSink, type FakeServer } from '../fakes/http-fake.js';
import { startRedis, type RedisServer } from '../helpers/redis.js';
import { tempDir } from '../helpers/tmp.js';
import { until } from '../helpers/wait.js';
import { caughtUp } from '../helpers/settle.js';
import { testSeed } from '../helpers/seed.js';

/**
 * The fuzz suite: generated requests, valid and hostile, to every input route
 * and every spelling of every route, on the memory, SQLite and Redis stores,
 * with a webhook that records what it is sent. What must hold, whatever came:
 *
 * - never a 5xx; a request without a valid token never passes a tenant route;
 * - the replica never degrades, and /readyz stays 200;
 * - every 2xx CREATE, UPDATE or close reaches the webhook once in effect (one
 *   Idempotency-Key each), and nothing else does: a 4xx changed nothing;
 * - the live incidents are exactly those the answers created and did not close.
 *
 * ONCEONLY_FUZZ_REQUESTS sets the requests per store (default 7,000, so
 * 21,000 a run); ONCEONLY_FUZZ_SEED replays a run.
 */
const PER_STORE = Number(process.env.ONCEONLY_FUZZ_REQUESTS ?? 7000);
const SEED = testSeed('integration/fuzz-backends', 'ONCEONLY_FUZZ_SEED');
const TOKENS = { acme: 'fuzz-token-acme-0000000001', beta: 'fuzz-token-beta-0000000002' } as const;
type Tenant = keyof typeof TOKENS;
const OPEN = new Set(['/healthz', '/readyz', '/metrics', '/', '/dashboard/app.js', '/dashboard/style.css']);

// ---------------------------------------------------------------- generators

/** Text as producers and attackers send it: any Unicode (lone surrogates too), controls, huge, operator-laden. */
const text: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: fc.string({ unit: 'grapheme', minLength: 1, maxLength: 24 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 24 }) },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      '\u0000',
      'a\u0000b',
      '\ud800',
      'x\udc00',
      '\u001b[31mred',
      'del\u007f',
      'line\nbreak',
      'tab\there',
      '\u2028\u2029',
      '\ufeffbom',
      'İı',
      '^ORcorrelation_idISNOTEMPTY^NQ',
      '" OR labels is not EMPTY OR labels = "',
      '${env:HOME}',
      '../../etc/passwd',
      '%2e%2e%2f',
      '<!channel> <@U1|x>',
      `dedup:${'0'.repeat(32)}`,
      // SCAN-glob and hash-tag characters: once spliced into a Redis SCAN pattern, they reached other tenants' keys.
      '*',
      '}:i:acme:junk-1',
      '{oo:*}',
      'a?b[c-z]\\*',
      '',
    ),
  },
  { weight: 1, arbitrary: fc.constantFrom('x'.repeat(257), 'y'.repeat(1025), 'z'.repeat(5000), '€'.repeat(600)) },
);
/** Valid identity text, as varied as Unicode allows: no controls, no lone surrogates. */
const wellFormed = fc.string({ unit: 'grapheme', minLength: 1, maxLength: 24 }).filter((t) => ![...t].some((c) => c.charCodeAt(0) < 0x20 || c === '\u007f'));
/**
 * A small pool per identity field, so the same fault comes again (SUPPRESS,
 * UPDATE, close): mostly well-formed, a few hostile, and now and then a
 * fresh hostile value outside the pool.
 */
const pool = (n: number) =>
  fc.oneof(
    { weight: 12, arbitrary: fc.constantFrom(...fc.sample(wellFormed, { numRuns: n, seed: SEED })) },
    { weight: 2, arbitrary: fc.constantFrom(...fc.sample(text, { numRuns: Math.ceil(n / 4), seed: SEED + 1 })) },
    { weight: 1, arbitrary: text },
  );
const elements = pool(24);
const faultClasses = pool(4);
const devices = pool(6);
const fingerprints = pool(12);
const pdKeys = pool(8);

const deep = (depth: number): unknown => {
  let v: unknown = 'leaf';
  for (let i = 0; i < depth; i++) v = { d: v };
  return v;
};
/** Objects carried along: ordinary, deep (under and over 32 levels), wide, large. */
const carried: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 12, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
  { weight: 1, arbitrary: fc.integer({ min: 25, max: 40 }).map(deep) },
  // Deeper than JSON.stringify itself can go: written into the body as text (see toJson).
  { weight: 1, arbitrary: fc.constantFrom(5000, 60_000).map((n) => `__DEEP_${n}__`) },
  { weight: 1, arbitrary: fc.integer({ min: 100, max: 3000 }).map((n) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, 'v'.repeat(20)]))) },
  { weight: 1, arbitrary: fc.dictionary(text, text, { maxKeys: 4 }) },
);
/** Numbers at their edges, and things that are not numbers. */
const number: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 5, arbitrary: fc.integer({ min: 0, max: 50 }) },
  { weight: 2, arbitrary: fc.double() },
  { weight: 2, arbitrary: fc.constantFrom(-1, -0, 1.5, 2 ** 53, 2 ** 53 + 2, 1e308, -1e308, Number.MAX_SAFE_INTEGER, '7', null, true, [], {}) },
);
const severity = fc.oneof({ weight: 6, arbitrary: fc.constantFrom('CRITICAL', 'MAJOR', 'MINOR', 'WARNING', 'INFO') }, { weight: 1, arbitrary: text });
const date = fc.oneof(
  { weight: 5, arbitrary: fc.date({ min: new Date('2026-01-01'), max: new Date('2027-01-01'), noInvalidDate: true }).map((d) => d.toISOString()) },
  { weight: 1, arbitrary: fc.constantFrom('0001-01-01T00:00:00Z', 'not a date', '2026-13-45T99:99:99Z', '') },
);
/** Sometimes a field goes missing or gains a neighbour it should not have. */
const maybe = <T>(a: fc.Arbitrary<T>) => fc.option(a, { nil: undefined, freq: 6 });

const incident = fc.record(
  {
    element_id: elements,
    fault_class: faultClasses,
    root_cause_id: fc.constantFrom('cut', 'power', 'çut'),
    severity,
    summary: maybe(text),
    details: maybe(carried),
    cleared: maybe(fc.boolean()),
  },
  { requiredKeys: ['element_id', 'fault_class', 'root_cause_id', 'severity'] },
);
const event = (tenant: Tenant) =>
  fc.record({
    tenant_id: fc.oneof(
      { weight: 8, arbitrary: fc.constant(tenant) },
      { weight: 1, arbitrary: fc.constantFrom<string>('acme', 'beta') },
      { weight: 1, arbitrary: text },
    ),
    device_id: devices,
    boot_id: fc.constantFrom('b1', 'b2'),
    sequence: number,
    state: fc.oneof({ weight: 6, arbitrary: fc.constantFrom('IDLE', 'RUN', 'STOPPED') }, { weight: 1, arbitrary: text }),
    observed_at: date,
  });
const violation = fc.record({
  process_id: elements,
  rule_id: fc.oneof(fc.constantFrom('nelson_1', 'nelson_2', 'we_zone_b'), text),
  timestamp: number,
  value: number,
  center: number,
  ucl: number,
  lcl: number,
});
const labels = fc.dictionary(fc.oneof(fc.constantFrom('alertname', 'instance', 'severity'), text), text, { maxKeys: 4 });
const alertmanager = fc.record({
  version: fc.oneof({ weight: 8, arbitrary: fc.constant('4') }, { weight: 1, arbitrary: text }),
  status: fc.constantFrom('firing', 'resolved'),
  receiver: fc.constant('r'),
  alerts: fc.array(
    fc.record({
      status: fc.oneof({ weight: 8, arbitrary: fc.constantFrom('firing', 'resolved') }, { weight: 1, arbitrary: text }),
      labels: fc.oneof({ weight: 6, arbitrary: labels }, { weight: 1, arbitrary: carried }),
      annotations: fc.oneof(fc.dictionary(text, text, { maxKeys: 3 }), carried),
      startsAt: date,
      endsAt: maybe(date),
      fingerprint: fingerprints,
    }),
    { maxLength: 6 },
  ),
});
const pagerduty = (token: string) =>
  fc.record({
    routing_key: fc.oneof({ weight: 8, arbitrary: fc.constant(token) }, { weight: 1, arbitrary: text }),
    event_action: fc.oneof({ weight: 8, arbitrary: fc.constantFrom('trigger', 'acknowledge', 'resolve') }, { weight: 1, arbitrary: text }),
    dedup_key: maybe(pdKeys),
    payload: fc.record({
      summary: text,
      source: text,
      severity: fc.oneof(fc.constantFrom('critical', 'error', 'warning', 'info'), text),
      custom_details: maybe(carried),
    }),
  });

/** Ways to write a path that a router may take for the same route, or a broken one. */
const spell = (path: string): fc.Arbitrary<string> =>
  fc.constantFrom(
    path,
    `${path}/`,
    path.toUpperCase(),
    path.replace('/v', '/%76'),
    path.replace(/\/([a-z])/, (_, c: string) => `/%${c.charCodeAt(0).toString(16)}`),
    `/${path}`,
    path.replace(/^\/([^/]+)\//, '/$1//'),
    `/x/..${path}`,
    `${path}/.`,
    path.replace(/\/([^/]+)$/, '/%zz$1'),
    `${path}%00`,
    `${path}?%`,
  );

type Auth = 'token' | 'none' | 'wrong' | 'other';
interface Shot {
  tenant: Tenant;
  auth: Auth;
  method: 'GET' | 'POST' | 'DELETE';
  url: string;
  /** the route as written, before spelling */
  route: string;
  body?: string;
  contentType?: string;
  ip: string;
  /** DELETE: the incident key, as the model knows it */
  key?: string;
  /** POST: an Idempotency-Key, new each time (a repeat would be a replay, which the model does not count) */
  idempotencyKey?: string;
}

const tenantArb = fc.constantFrom<Tenant>('acme', 'beta');
const auth = fc.oneof({ weight: 12, arbitrary: fc.constant<Auth>('token') }, { weight: 1, arbitrary: fc.constantFrom<Auth>('none', 'wrong', 'other') });
const ip = fc.integer({ min: 1, max: 250 }).map((n) => `10.0.0.${n}`);
/** JSON text of `b`, with each `"__DEEP_N__"` placeholder replaced by an object N levels deep. */
const toJson = (b: unknown) => JSON.stringify(b).replace(/"__DEEP_(\d+)__"/g, (_, n: string) => `${'{"d":'.repeat(Number(n))}"leaf"${'}'.repeat(Number(n))}`);
const json = (route: string, body: fc.Arbitrary<unknown>) =>
  fc.record({ route: fc.constant(route), body: body.map(toJson), contentType: fc.constant('application/json') });
/** Mostly clean spellings of the route, sometimes any other. */
const url = (route: string) => fc.oneof({ weight: 9, arbitrary: fc.constant(route) }, { weight: 1, arbitrary: spell(route) });

const shot = (liveKeys: () => string[]): fc.Arbitrary<Shot> =>
  fc.tuple(tenantArb, auth, ip).chain(([tenant, a, from]) => {
    const posts = fc.oneof(
      { weight: 5, arbitrary: json('/v1/incidents', incident) },
      { weight: 3, arbitrary: json('/v1/events', event(tenant)) },
      { weight: 2, arbitrary: json('/v1/violations', violation) },
      { weight: 2, arbitrary: json('/v1/alertmanager', alertmanager) },
      { weight: 2, arbitrary: json('/v2/enqueue', pagerduty(TOKENS[tenant])) },
      {
        weight: 1,
        arbitrary: fc.record({
          route: fc.constantFrom('/v1/incidents', '/v1/events', '/v1/alertmanager'),
          body: fc.oneof(
            fc.string({ maxLength: 40 }).map((t) => `{${t}`),
            fc.constant('[]'),
            fc.constant('null'),
            fc.constant(''),
          ),
          contentType: fc.constantFrom('application/json', 'text/plain', 'application/x-www-form-urlencoded'),
        }),
      },
    );
    // Now and then with an Idempotency-Key, so hostile bodies (deep ones too) meet its hashing as well as the route's checks.
    const idem = fc.option(fc.uuid(), { freq: 4 });
    const post = posts.chain((p) =>
      fc
        .tuple(url(p.route), idem)
        .map(([u, k]) => ({ tenant, auth: a, ip: from, method: 'POST' as const, url: u, ...p, ...(k === null ? {} : { idempotencyKey: k }) })),
    );
    const keys = liveKeys();
    const del = fc
      .oneof({ weight: 4, arbitrary: keys.length > 0 ? fc.constantFrom(...keys) : fc.constant(`dedup:${'a'.repeat(32)}`) }, { weight: 1, arbitrary: text })
      .chain((k) => {
        const route = `/v1/incidents/${everyByteEncoded(k)}`;
        return url(route).map((u) => ({ tenant, auth: a, ip: from, method: 'DELETE' as const, url: u, route, key: k }));
      });
    // A key's history, by a live key or any text as its key (every byte percent-encoded).
    const history = fc
      .oneof({ weight: 2, arbitrary: keys.length > 0 ? fc.constantFrom(...keys) : fc.constant(`dedup:${'a'.repeat(32)}`) }, { weight: 1, arbitrary: text })
      .chain((k) => {
        const route = `/v1/incidents/${everyByteEncoded(k)}/history`;
        return url(route).map((u) => ({ tenant, auth: a, ip: from, method: 'GET' as const, url: u, route }));
      });
    const get = fc
      .constantFrom('/v1/incidents', '/v1/dead-letters', '/v1/stats', '/v1/dashboard', '/v1/devices/acme/x', '/openapi.json', '/healthz', '/readyz', '/')
      .chain((route) => spell(route).map((u) => ({ tenant, auth: a, ip: from, method: 'GET' as const, url: u, route })));
    return fc.oneof({ weight: 14, arbitrary: post }, { weight: 2, arbitrary: del }, { weight: 1, arbitrary: get }, { weight: 1, arbitrary: history });
  });

/** A key as a path segment, every byte percent-encoded (a lone surrogate goes as UTF-8 does it, U+FFFD). */
const everyByteEncoded = (k: string) => [...Buffer.from(k)].map((b) => `%${b.toString(16).padStart(2, '0').toUpperCase()}`).join('');

// ---------------------------------------------------------------- the model

/** Deliveries the answers promise, as `tenant|kind|key|action` → how many. */
class Model {
  readonly expected = new Map<string, number>();
  readonly live = { acme: new Set<string>(), beta: new Set<string>() };
  readonly statuses = new Map<number, number>();
  count(tenant: string, kind: string, key: string, action: string) {
    const k = `${tenant}|${kind}|${key}|${action}`;
    this.expected.set(k, (this.expected.get(k) ?? 0) + 1);
  }
  opened(tenant: Tenant, key: string) {
    this.count(tenant, 'incident', key, 'create');
    this.live[tenant].add(key);
  }
  closed(tenant: Tenant, key: string) {
    this.count(tenant, 'incident', key, 'close');
    this.live[tenant].delete(key);
  }
}

function learn(m: Model, s: Shot, status: number, body: any) {
  if (status < 200 || status >= 300) return;
  const t = s.tenant;
  if (s.method === 'DELETE') {
    m.closed(t, s.key!);
    return;
  }
  if (s.method !== 'POST') return;
  if (s.route === '/v1/incidents') {
    if (body.decision === 'CREATE') m.opened(t, body.dedup_key);
    if (body.decision === 'UPDATE') m.count(t, 'incident', body.dedup_key, 'update');
  } else if (s.route === '/v1/events') {
    if (body.transition) m.count(t, 'event', '*', 'notify');
  } else if (s.route === '/v1/violations') {
    if (body.decision === 'CREATE') m.count(t, 'violation', body.key, 'create');
  } else if (s.route === '/v1/alertmanager') {
    for (const a of body.alerts as Array<{ fingerprint: string; outcome: string }>) {
      const key = `am:${a.fingerprint}`;
      if (a.outcome === 'CREATE') m.opened(t, key);
      if (a.outcome === 'UPDATE') m.count(t, 'incident', key, 'update');
      if (a.outcome === 'closed') m.closed(t, key);
    }
  }
  // /v2/enqueue answers PagerDuty's shape, which does not say what was decided: its `pd:` keys are left out of the delivery check.
}

/** What reached the webhook, counted the same way: one per distinct Idempotency-Key. */
function received(hook: FakeServer): Map<string, number> {
  const seen = new Set<string>();
  const got = new Map<string, number>();
  for (const r of hook.requests) {
    const b = r.body as { tenant: string; kind: string; key: string; action: string };
    if (b.key.startsWith('pd:')) continue;
    const id = `${b.tenant}|${r.headers['idempotency-key']}`;
    if (seen.has(id)) continue;
    seen.add(id);
    const k = `${b.tenant}|${b.kind}|${b.kind === 'event' ? '*' : b.key}|${b.action}`;
    got.set(k, (got.get(k) ?? 0) + 1);
  }
  return got;
}

// ---------------------------------------------------------------- the run

async function fuzz(store: string, dir: string, hook: FakeServer): Promise<{ model: Model; ms: number }> {
  const config = join(dir, 'onceonly.yaml');
  writeFileSync(
    config,
    `tenants:
  - { id: acme, tokens: [${TOKENS.acme}], rate_limit: { per_second: 1000000, burst: 1000000 } }
  - { id: beta, tokens: [${TOKENS.beta}], rate_limit: { per_second: 1000000, burst: 1000000 } }
failopen: { timeout_ms: 5000, journal_path: ${join(dir, 'journal.db')} }
adapters: [ { name: hook, type: webhook, url: "${hook.url}/in" } ]
`,
  );
  const server: RunningServer = await startServer({
    port: 0,
    host: '127.0.0.1',
    store,
    configPath: config,
    logger: pino({ level: 'silent' }),
    delivery: { idleMs: 20 },
  });
  const model = new Model();
  const started = performance.now();
  try {
    const shots = fc.sample(
      shot(() => [...model.live.acme, ...model.live.beta]),
      { numRuns: PER_STORE, seed: SEED },
    );
    let n = 0;
    for (const s of shots) {
      const headers: Record<string, string> = {};
      if (s.contentType) headers['content-type'] = s.contentType;
      if (s.auth === 'token') headers.authorization = `Bearer ${TOKENS[s.tenant]}`;
      if (s.auth === 'wrong') headers.authorization = `Bearer ${TOKENS[s.tenant]}x`;
      if (s.auth === 'other') headers.authorization = `Basic ${Buffer.from('a:b').toString('base64')}`;
      if (s.idempotencyKey) headers['idempotency-key'] = s.idempotencyKey;
      const res = await server.app.inject({ method: s.method, url: s.url, headers, remoteAddress: s.ip, ...(s.body !== undefined ? { payload: s.body } : {}) });
      const status = res.statusCode;
      model.statuses.set(status, (model.statuses.get(status) ?? 0) + 1);
      const what = () => `seed ${SEED}, request ${n}: ${s.method} ${s.url} (${s.auth}) ${s.body?.slice(0, 200)} → ${status} ${res.payload.slice(0, 300)}`;
      assert.ok(status < 500, `a 5xx: ${what()}`);
      // Without a valid token, only the open routes answer 2xx (and PagerDuty's routing_key may carry the token).
      const path = s.url.split('?')[0]!;
      if (s.auth !== 'token' && status < 300 && !OPEN.has(path) && !OPEN.has(s.route) && !(s.route === '/v2/enqueue' && s.body?.includes(TOKENS[s.tenant]))) {
        assert.fail(`a tenant route passed without a valid token: ${what()}`);
      }
      const isJson = String(res.headers['content-type'] ?? '').includes('json');
      // A spelling the router took for a route still belongs to the route's tenant: learn only from exact URLs.
      if (s.url === s.route || (s.method === 'POST' && status >= 200 && status < 300))
        learn(model, s, status, isJson && res.payload ? JSON.parse(res.payload) : null);
      if (++n % 500 === 0) {
        const ready = await server.app.inject({ method: 'GET', url: '/readyz' });
        assert.equal(ready.statusCode, 200, `not ready after ${n} requests: ${ready.payload}`);
      }
    }
    const ms = performance.now() - started;
    // Delivery is asynchronous: wait until what reached the webhook matches the answers (or time runs out),
    // then for the queue to be empty, and compare again, so a late extra delivery is seen too.
    const mismatches = () => {
      const got = received(hook);
      const keys = new Set([...model.expected.keys(), ...got.keys()]);
      return [...keys]
        .filter((k) => (model.expected.get(k) ?? 0) !== (got.get(k) ?? 0))
        .map((k) => `${k}: answered ${model.expected.get(k) ?? 0}, delivered ${got.get(k) ?? 0}`);
    };
    const metricsText = async () => (await server.app.inject({ method: 'GET', url: '/metrics' })).payload;
    await until(
      async () => mismatches().length === 0,
      60_000,
      () => `${mismatches().length} decisions not delivered as answered`,
    ).catch(() => {});
    await until(
      async () => /^onceonly_deliveries_pending 0$/m.test(await metricsText()),
      60_000,
      () => 'deliveries still pending',
    );
    await caughtUp(server);
    assert.deepEqual(mismatches(), [], `seed ${SEED}: every 2xx decision delivered once, and nothing else`);
    const metrics = await metricsText();
    assert.match(metrics, /^onceonly_store_degradations_total 0$/m, 'the replica never failed open');
    assert.match(metrics, /^onceonly_dead_letters 0$/m, 'nothing went dead');
    assert.equal((await server.app.inject({ method: 'GET', url: '/readyz' })).statusCode, 200);
    for (const t of ['acme', 'beta'] as const) {
      const listed = await server.app.inject({ method: 'GET', url: '/v1/incidents?limit=1000', headers: { authorization: `Bearer ${TOKENS[t]}` } });
      const live = (JSON.parse(listed.payload).incidents as Array<{ dedup_key: string }>).map((i) => i.dedup_key).filter((k) => !k.startsWith('pd:'));
      assert.deepEqual(live.sort(), [...model.live[t]].sort(), `seed ${SEED}: ${t}'s live incidents are those the answers created and did not close`);
    }
    return { model, ms };
  } finally {
    await server.close();
  }
}

describe(`fuzz: ${PER_STORE} generated requests on each store (seed ${SEED})`, () => {
  let redis: RedisServer;
  const figures: string[] = [];
  before(async () => {
    redis = await startRedis();
  });
  const answers = new Map<string, string>();
  after(async () => {
    await redis.stop();
    console.log(figures.join('\n'));
  });
  for (const kind of ['memory', 'sqlite', 'redis'] as const) {
    test(kind, async () => {
      const dir = tempDir();
      const hook = await startSink(200, {});
      try {
        const url = kind === 'memory' ? 'memory:' : kind === 'sqlite' ? `sqlite:${join(dir.path, 'fuzz.db')}` : redis.url;
        const { model, ms } = await fuzz(url, dir.path, hook);
        const ok = [...model.statuses].filter(([c]) => c < 300).reduce((a, [, n]) => a + n, 0);
        const delivered = [...model.expected.values()].reduce((a, b) => a + b, 0);
        figures.push(
          `fuzz ${kind}: ${PER_STORE} requests in ${(ms / 1000).toFixed(1)} s; ${ok} answered 2xx, ${PER_STORE - ok} refused; ` +
            `${delivered} decisions delivered once each; statuses ${JSON.stringify(Object.fromEntries([...model.statuses].sort((a, b) => a[0] - b[0])))}`,
        );
        answers.set(kind, JSON.stringify(Object.fromEntries([...model.statuses].sort((a, b) => a[0] - b[0]))));
        assert.ok(ok > PER_STORE / 5, `enough requests were valid to test delivery (${ok})`);
        assert.ok(delivered > 100, `enough decisions were delivered (${delivered})`);
      } finally {
        await hook.close();
        dir.remove();
      }
    });
  }
  test('the three stores answered the same requests alike', () => {
    assert.equal(answers.size, 3, 'every store ran');
    assert.equal(new Set(answers.values()).size, 1, JSON.stringify(Object.fromEntries(answers)));
  });
});
