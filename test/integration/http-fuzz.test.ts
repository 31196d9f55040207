import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { inProcessServer } from '../helpers/server.js';
import { testSeed } from '../helpers/seed.js';

// 10,000 generated malformed requests across every endpoint that takes a
// body: each must be refused with a 4xx that names the problem, none may be a
// 5xx, nothing may be stored, and the server must stay healthy.
const VALID = {
  '/v1/incidents': { element_id: 'olt-1', fault_class: 'LOS', root_cause_id: 'cut', severity: 'MAJOR' },
  '/v1/events': { tenant_id: 'acme', device_id: 'pos-1', boot_id: 'b1', sequence: 1, state: 'IDLE', observed_at: '2026-11-30T12:00:00Z' },
  '/v1/violations': { process_id: 'etch', rule_id: 'nelson_1', timestamp: 1770000000, value: 13, center: 10, ucl: 12, lcl: 8 },
  '/v2/enqueue': { routing_key: 'rk', event_action: 'trigger', dedup_key: 'k', payload: { summary: 's', source: 'x', severity: 'info' } },
  '/v1/alertmanager': {
    version: '4',
    status: 'firing',
    alerts: [
      { status: 'firing', labels: { alertname: 'A' }, annotations: {}, startsAt: '2026-11-30T12:00:00Z', endsAt: '0001-01-01T00:00:00Z', fingerprint: 'f1' },
    ],
  },
  '/v1/routes/test': { labels: { team: 'net' } },
  '/v2/alerts': { message: 'disk full', alias: 'db1-disk', priority: 'P2', tags: ['db'], details: { team: 'dba' } },
  // Opsgenie's edits (PUT) of an alert named by alias.
  '/v2/alerts/db1-disk/message?identifierType=alias': { message: 'disk full on /var' },
  '/v2/alerts/db1-disk/description?identifierType=alias': { description: 'grew 40 GB' },
  '/v2/alerts/db1-disk/priority?identifierType=alias': { priority: 'P1' },
  // And its additions of tags and details (POST).
  '/v2/alerts/db1-disk/tags?identifierType=alias': { tags: ['db', 'disk'] },
  '/v2/alerts/db1-disk/details?identifierType=alias': { details: { runbook: 'rb/42' } },
  // And a note on it.
  '/v2/alerts/db1-disk/notes?identifierType=alias': { note: 'rebooted the array', user: 'noc-alice', source: 'runbook' },
  '/v2/alerts/db1-disk/responders?identifierType=alias': { responder: { type: 'team', name: 'dba' } },
  '/api/v2/silences': {
    matchers: [{ name: 'fault_class', value: 'LOS', isRegex: false, isEqual: true }],
    startsAt: '2026-11-30T12:00:00Z',
    endsAt: '2099-01-01T00:00:00Z',
    createdBy: 'ops',
    comment: 'planned work',
  },
} as const;
type Route = keyof typeof VALID;
const ROUTES = Object.keys(VALID) as Route[];
/** Fields whose removal makes the body invalid (PagerDuty's dedup_key is optional on trigger). */
const REQUIRED: Record<Route, string[]> = {
  '/v1/incidents': ['element_id', 'fault_class', 'root_cause_id', 'severity'],
  '/v1/events': Object.keys(VALID['/v1/events']),
  '/v1/violations': Object.keys(VALID['/v1/violations']),
  '/v2/enqueue': ['routing_key', 'event_action', 'payload'],
  '/v1/alertmanager': ['version', 'status', 'alerts'],
  // Not comment: any text up to 4,096 characters is a valid comment, so changing it rarely makes the body invalid.
  '/api/v2/silences': ['matchers', 'startsAt', 'endsAt', 'createdBy'],
  '/v1/routes/test': ['labels'],
  // Opsgenie requires only the message: an alert without alias, priority, tags or details is valid.
  '/v2/alerts': ['message'],
  '/v2/alerts/db1-disk/message?identifierType=alias': ['message'],
  '/v2/alerts/db1-disk/description?identifierType=alias': ['description'],
  '/v2/alerts/db1-disk/priority?identifierType=alias': ['priority'],
  '/v2/alerts/db1-disk/tags?identifierType=alias': ['tags'],
  '/v2/alerts/db1-disk/details?identifierType=alias': ['details'],
  '/v2/alerts/db1-disk/notes?identifierType=alias': ['note'],
  '/v2/alerts/db1-disk/responders?identifierType=alias': ['responder'],
};
/** Opsgenie's edits of a field are PUT; every other route, its tags and details additions too, POST. */
const methodOf = (route: Route) => (/^\/v2\/alerts\/[^/]+\/(message|description|priority)\?/.test(route) ? 'PUT' : 'POST');
/** Routes that refuse in Opsgenie's shape. */
const opsgenie = (route: Route) => route === '/v2/alerts' || route.startsWith('/v2/alerts/');
/** Strict bodies refuse unknown fields; PagerDuty's and Alertmanager's do not, as their senders add fields. */
const STRICT: Route[] = ['/v1/incidents', '/v1/events', '/v1/violations', '/v1/routes/test'];

/** A violation's numbers may be any number (negative, fractional); an event's sequence may not. */
const ANY_NUMBER = new Set(['timestamp', 'value', 'center', 'ucl', 'lcl']);

/** A value of another JSON type than `v`, or one that breaks `field`'s rule. */
const wrongFor = (field: string, v: unknown): fc.Arbitrary<unknown> => {
  const others = [
    fc.constant(null),
    fc.boolean(),
    fc.array(fc.integer(), { maxLength: 3 }),
    fc.dictionary(fc.string({ maxLength: 5 }), fc.integer(), { maxKeys: 2 }),
  ];
  if (typeof v === 'string') return fc.oneof(fc.integer(), fc.double({ noNaN: true }), fc.constant(''), fc.constant('x'.repeat(2000)), ...others);
  if (typeof v === 'number' && ANY_NUMBER.has(field)) return fc.oneof(fc.string({ maxLength: 10 }), ...others);
  if (typeof v === 'number') return fc.oneof(fc.string({ maxLength: 10 }), fc.constant(-1), fc.constant(1.5), fc.constant(2 ** 60), ...others);
  if (Array.isArray(v))
    return fc.oneof(
      fc.string({ maxLength: 10 }),
      fc.integer(),
      fc.constant(null),
      fc.boolean(),
      fc.array(fc.integer(), { minLength: 1, maxLength: 3 }),
      others[3]!,
    );
  return fc.oneof(fc.string({ maxLength: 10 }), fc.integer(), ...others.slice(0, 3));
};

interface Shot {
  route: Route;
  body: string;
  contentType: string;
  what: string;
}

const shot: fc.Arbitrary<Shot> = fc.constantFrom(...ROUTES).chain((route) => {
  const valid = VALID[route] as Record<string, unknown>;
  const json = (b: unknown, what: string) => ({ route, body: JSON.stringify(b), contentType: 'application/json', what });
  const mutations: Array<fc.Arbitrary<Shot>> = [
    fc.constantFrom(...REQUIRED[route]).map((f) => json({ ...valid, [f]: undefined }, `without ${f}`)),
    fc.constantFrom(...REQUIRED[route]).chain((f) =>
      wrongFor(f, valid[f])
        // Opsgenie cuts a long message or description rather than refuse it: any text that is not blank is one.
        .filter((w) => !(opsgenie(route) && typeof w === 'string' && w.trim() !== ''))
        .map((w) => json({ ...valid, [f]: w }, `${f} = ${JSON.stringify(w)?.slice(0, 40)}`)),
    ),
    // Any JSON at all (almost never a valid body; such a case is filtered out below).
    fc.jsonValue({ maxDepth: 3 }).map((v) => json(v, 'arbitrary JSON')),
    fc.string({ maxLength: 60 }).map((t) => ({ route, body: `{${t}`, contentType: 'application/json', what: 'broken JSON' })),
    fc
      .constantFrom('text/plain', 'application/x-www-form-urlencoded', 'application/xml')
      .map((ct) => ({ route, body: JSON.stringify(valid), contentType: ct, what: ct })),
  ];
  if (route === '/api/v2/silences') {
    // Regexes a tenant should not be able to store: too costly to compile and run, not RE2, or a silence of everything.
    const regex = fc.oneof(
      fc.integer({ min: 2, max: 256 }).map((n) => '.{0,1000}'.repeat(n)),
      fc.integer({ min: 1, max: 8 }).map((n) => '(?:[a-z]{50}){50}'.repeat(n + 1)),
      fc.constantFrom('(', 'a**', '[z-a]', 'x{1001}', '\\', '(?P<>x)', '(?<n', '(a{100}){100}'),
      fc.constantFrom('.*', 'a*', '(|x)', '.{0,5}'),
    );
    mutations.push(
      regex.map((value) => json({ ...valid, matchers: [{ name: 'element_id', value, isRegex: true, isEqual: true }] }, `regex ${value.slice(0, 40)}`)),
    );
  }
  if (route === '/v1/incidents' || route === '/v1/routes/test') {
    // Labels no incident may carry: a name that is not one, a value that is not bounded text, too many.
    const badName = fc.oneof(
      fc.tuple(fc.integer({ min: 0, max: 9 }), fc.string({ maxLength: 8 })).map(([d, t]) => `${d}${t}`),
      fc.string({ minLength: 1, maxLength: 8 }).map((t) => `a-${t}`),
      fc.constantFrom('', 'a b', 'é', 'a.b', `a${'b'.repeat(256)}`),
    );
    const badValue = fc.oneof(
      fc.integer(),
      fc.constant(null),
      fc.boolean(),
      fc.array(fc.string(), { maxLength: 2 }),
      fc.constant('x'.repeat(4097)),
      fc.constant('a\u0007b'),
    );
    mutations.push(
      badName.map((name) => json({ ...valid, labels: { team: 'net', [name]: 'v' } }, `label name ${JSON.stringify(name.slice(0, 20))}`)),
      badValue.map((value) => json({ ...valid, labels: { team: value } }, `label value ${JSON.stringify(value)?.slice(0, 20)}`)),
      fc
        .integer({ min: 65, max: 300 })
        .map((n) => json({ ...valid, labels: Object.fromEntries(Array.from({ length: n }, (_, i) => [`l${i}`, 'v'])) }, `${n} labels`)),
    );
  }
  if (route === '/v2/alerts') {
    // What Opsgenie refuses past the message: a priority it has not, tags and details past its limits or of the wrong type, a long alias.
    const broken = fc.oneof(
      fc
        .string({ maxLength: 4 })
        .filter((p) => !['P1', 'P2', 'P3', 'P4', 'P5'].includes(p))
        .map((priority) => ({ priority })),
      fc.integer({ min: 21, max: 200 }).map((n) => ({ tags: Array.from({ length: n }, (_, i) => `t${i}`) })),
      fc.integer({ min: 51, max: 500 }).map((n) => ({ tags: ['x'.repeat(n)] })),
      fc.oneof(fc.integer(), fc.constant('a,b'), fc.constant([1])).map((tags) => ({ tags })),
      fc.oneof(fc.constant({ a: 1 }), fc.constant(['x']), fc.constant('k=v'), fc.constant({ a: null })).map((details) => ({ details })),
      fc.integer({ min: 513, max: 2000 }).map((n) => ({ alias: 'a'.repeat(n) })),
      fc.constantFrom('', '  ', 7, true).map((alias) => ({ alias })),
      // Responders and visibleTo as Opsgenie refuses them: not a list, a type it has not, no id or name, too many.
      fc
        .constantFrom(
          'team:noc',
          [{ name: 'noc' }],
          [{ type: 'group', name: 'noc' }],
          [{ type: 'team' }],
          [{ type: 'team', name: '' }],
          [{ type: 'team', name: 'a,b' }],
          [{ type: 'user', username: 7 }],
          Array.from({ length: 51 }, (_, i) => ({ type: 'team', name: `t${i}` })),
        )
        .chain((r) => fc.constantFrom({ responders: r }, { visibleTo: r })),
    );
    mutations.push(broken.map((b) => json({ ...valid, ...b }, `opsgenie ${JSON.stringify(b).slice(0, 40)}`)));
  }
  if (route.includes('/notes?')) {
    // A note Opsgenie refuses: blank, past 25,000 characters, not text, or a user or source past 100.
    const broken = fc.constantFrom(
      { note: '  ' },
      { note: 'x'.repeat(25_001) },
      { note: 7 },
      { user: 'u'.repeat(101) },
      { source: ['s'] },
      { note: 'a\u0007b' },
    );
    mutations.push(broken.map((b) => json({ ...valid, ...b }, `note ${JSON.stringify(b).slice(0, 40)}`)));
  }
  if (STRICT.includes(route)) {
    mutations.push(
      fc
        .string({ minLength: 1, maxLength: 12 })
        .filter((k) => !(k in valid))
        .map((k) => json({ ...valid, [k]: 1 }, `extra field ${k}`)),
    );
  }
  return fc.oneof(...mutations);
});

/** Bodies that happen to be valid are not what this test is about. */
function accidentallyValid(s: Shot): boolean {
  if (s.contentType !== 'application/json') return false;
  try {
    const v = JSON.parse(s.body) as Record<string, unknown>;
    const valid = VALID[s.route] as Record<string, unknown>;
    return (
      typeof v === 'object' &&
      v !== null &&
      Object.keys(valid).every((k) => JSON.stringify(v[k]) === JSON.stringify(valid[k])) &&
      Object.keys(v).length === Object.keys(valid).length
    );
  } catch {
    return false;
  }
}

test('10,000 generated malformed bodies across all endpoints: zero 5xx, a 4xx each, nothing stored, still healthy', async () => {
  const s = await inProcessServer({ store: 'memory' });
  try {
    const statuses = new Map<number, number>();
    await fc.assert(
      fc.asyncProperty(
        shot.filter((x) => !accidentallyValid(x)),
        async (x) => {
          const res = await s.app.inject({ method: methodOf(x.route), url: x.route, headers: { 'content-type': x.contentType }, payload: x.body });
          statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1);
          if (res.statusCode < 400 || res.statusCode >= 500) return false;
          const body = JSON.parse(res.payload);
          // Every refusal says what is wrong: the API's error shape, or PagerDuty's on /v2/enqueue, or Opsgenie's on /v2/alerts.
          if (x.route === '/v2/enqueue') return Array.isArray(body.errors) && body.errors.length > 0;
          if (opsgenie(x.route)) return typeof body.message === 'string' && body.message !== '' && typeof body.requestId === 'string';
          return typeof body.error?.message === 'string' && body.error.message !== '';
        },
      ),
      { numRuns: 10_000, seed: testSeed('integration/http-fuzz') },
    );
    console.log('statuses:', Object.fromEntries(statuses));
    assert.equal(
      [...statuses.values()].reduce((a, b) => a + b, 0),
      10_000,
    );
    assert.ok([...statuses.keys()].every((c) => c >= 400 && c < 500));
    const big = await s.app.inject({
      method: 'POST',
      url: '/v1/incidents',
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({ ...VALID['/v1/incidents'], summary: 'x'.repeat(600 * 1024) }),
    });
    assert.equal(big.statusCode, 413);

    assert.equal((await s.get('/healthz')).status, 200, 'healthy');
    assert.equal((await s.get('/readyz')).status, 200);
    const stats = (await s.get('/v1/stats')).body;
    assert.equal(stats.applied + stats.duplicate, 0, 'no event applied');
    assert.equal(
      stats.received,
      Object.values(stats.rejected as Record<string, number>).reduce((a, b) => a + b, 0),
      'every event request rejected, and counted',
    );
    const metrics = await (await fetch(`${s.url}/metrics`)).text();
    assert.match(metrics, /^onceonly_incidents_live 0$/m, 'no incident stored');
    assert.match(metrics, /^onceonly_deliveries_pending 0$/m);
    assert.doesNotMatch(metrics, /onceonly_incident_decisions_total\{[^}]*\} [1-9]/, 'no decision was made');
    assert.doesNotMatch(metrics, /onceonly_violation_decisions_total\{[^}]*\} [1-9]/);
    assert.deepEqual((await s.get('/api/v2/silences')).body, [], 'no silence stored');
  } finally {
    await s.stop();
  }
});

test('2,000 generated malformed acknowledgements of a live key: a 400 naming the problem each, and the key stays unacknowledged', async () => {
  const s = await inProcessServer({ store: 'memory' });
  try {
    const key: string = (await s.post('/v1/incidents', VALID['/v1/incidents'])).body.dedup_key;
    const url = `/v1/incidents/${key}/ack`;
    // A body is valid only as an object with at most `by`, text of 1..128 characters that fools no terminal.
    const body = fc.oneof(
      fc.jsonValue({ maxDepth: 3 }).filter((v) => !(typeof v === 'object' && v !== null && !Array.isArray(v) && Object.keys(v).length === 0)),
      wrongFor('by', 'ann').map((by) => ({ by })),
      fc.constantFrom('ann\u202e', 'a\u0085b', 'a\u0007', '\u2028', 'x'.repeat(129), '').map((by) => ({ by })),
      fc
        .string({ minLength: 1, maxLength: 12 })
        .filter((k) => k !== 'by')
        .map((k) => ({ by: 'ann', [k]: 1 })),
    );
    const statuses = new Map<number, number>();
    await fc.assert(
      fc.asyncProperty(body, async (b) => {
        const res = await s.app.inject({ method: 'POST', url, headers: { 'content-type': 'application/json' }, payload: JSON.stringify(b) });
        statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1);
        return res.statusCode === 400 && typeof JSON.parse(res.payload).error?.message === 'string';
      }),
      { numRuns: 2000, seed: testSeed('integration/http-fuzz/ack') },
    );
    console.log('ack statuses:', Object.fromEntries(statuses));
    const first = await s.app.inject({ method: 'POST', url, headers: { 'content-type': 'application/json' }, payload: '{}' });
    assert.equal(first.json().outcome, 'acknowledged', 'no malformed acknowledgement acknowledged it: the first good one does');
    assert.equal((await s.get('/healthz')).status, 200, 'healthy');
  } finally {
    await s.stop();
  }
});
