import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { inProcessServer, type InProcessServer } from '../helpers/server.js';
import { until } from '../helpers/wait.js';
import { groupKeyOf } from '../../src/groups/groups.js';

/**
 * Every tenant route, taken from the API description the server itself
 * serves (so a route added later is probed without touching this file), is
 * called by beta with acme's ids in every place an id goes: its incident keys
 * (plain, PagerDuty, Opsgenie and Alertmanager), its Opsgenie alias, its device, its dead letter, its
 * silence. Both tenants own data of every kind. Beta must never see one of
 * acme's markers, and nothing of acme's may change.
 */

const A = 'token-of-tenant-acme-0001';
const B = 'token-of-tenant-beta-0002';
const now = () => new Date();

let s: InProcessServer;
const as = (token: string) => async (method: string, url: string, body?: unknown) => {
  const res = await s.app.inject({
    method: method as 'GET',
    url,
    headers: { authorization: `Bearer ${token}` },
    ...(body === undefined ? {} : { payload: body as object }),
  });
  return { status: res.statusCode, text: res.payload, json: () => JSON.parse(res.payload) };
};
const acme = as(A);
const beta = as(B);

/** What each tenant owns, marked so that a leak shows in any body. */
const own = (t: 'acme' | 'beta') => ({
  incident: { element_id: `${t}-only-element`, fault_class: 'LOS', root_cause_id: `${t}-cut`, severity: 'MAJOR', summary: `${t}-only-summary` },
  pd: {
    routing_key: 'r',
    event_action: 'trigger',
    dedup_key: `${t}-only-pd`,
    payload: { summary: `${t}-only-pd-summary`, source: `${t}-only-host`, severity: 'error' },
  },
  am: {
    version: '4',
    status: 'firing',
    receiver: 'onceonly',
    groupKey: `{}:{alertname="${t}-only-alert"}`,
    alerts: [
      {
        status: 'firing',
        labels: { alertname: `${t}-only-alert`, instance: `${t}-only-instance` },
        annotations: {},
        startsAt: now().toISOString(),
        fingerprint: `${t}fp0000000001`,
      },
    ],
  },
  og: { message: `${t}-only-og-message`, alias: `${t}-only-og`, priority: 'P2', details: { host: `${t}-only-host` } },
  event: { tenant_id: t, device_id: `${t}-only-device`, boot_id: 'b1', sequence: 1, state: 'UP', observed_at: '2026-11-30T12:00:00Z' },
  violation: { process_id: `${t}-only-process`, rule_id: 'WE1', timestamp: Math.floor(Date.now() / 1000), value: 9, center: 0, ucl: 3, lcl: -3 },
  silence: {
    matchers: [{ name: 'element_id', value: `${t}-only-silenced`, isRegex: false, isEqual: true }],
    startsAt: now().toISOString(),
    endsAt: new Date(Date.now() + 3_600_000).toISOString(),
    createdBy: `${t}-only-author`,
    comment: `${t}-only-comment`,
  },
});

const ids = { keys: [] as string[], device: '', dead: [] as string[], silence: '' };
/**
 * Strings only acme's data holds and no probe sends (so an error that echoes
 * the id it was asked for is not mistaken for a leak): none may appear in
 * anything beta is answered.
 */
const markers = ['element', 'summary', 'pd-summary', 'og-message', 'host', 'alert', 'instance', 'comment', 'author', 'silenced', 'process'].map(
  (m) => `acme-only-${m}`,
);

async function seed(t: 'acme' | 'beta', call: typeof acme) {
  const o = own(t);
  const keys = [(await call('POST', '/v1/incidents', o.incident)).json().dedup_key as string, `pd:${o.pd.dedup_key}`, `og:${o.og.alias}`];
  assert.equal((await call('POST', '/v2/enqueue', o.pd)).status, 202);
  assert.equal((await call('POST', '/v2/alerts', o.og)).status, 202);
  assert.equal((await call('POST', '/v1/alertmanager', o.am)).status, 200);
  assert.equal((await call('POST', '/v1/events', o.event)).json().outcome, 'applied');
  assert.equal((await call('POST', '/v1/violations', o.violation)).status, 200);
  const silence = (await call('POST', '/api/v2/silences', o.silence)).json().silenceID as string;
  const listed = (await call('GET', '/v1/incidents')).json().incidents as Array<{ dedup_key: string }>;
  const am = listed.map((i) => i.dedup_key).find((k) => k.startsWith('am:'));
  assert.ok(am, `${t} has an Alertmanager incident`);
  keys.push(am);
  // Its deliveries cannot go anywhere (nobody listens): they become its dead letters.
  const dead = await until(async () => {
    const d = (await call('GET', '/v1/dead-letters')).json().dead_letters as Array<{ id: string }>;
    return d.length >= 3 ? d.map((x) => x.id) : null;
  }, 15_000);
  return { keys, device: o.event.device_id, dead, silence };
}

/** acme's view of everything it owns, as acme reads it. */
async function acmeState() {
  const views: Record<string, unknown> = {};
  for (const k of ids.keys) views[k] = (await acme('GET', `/v1/incidents/${encodeURIComponent(k)}`)).json();
  for (const k of ids.keys) views[`audit ${k}`] = (await acme('GET', `/v1/audit?key=${encodeURIComponent(k)}`)).text;
  for (const k of ids.keys) views[`history ${k}`] = (await acme('GET', `/v1/incidents/${encodeURIComponent(k)}/history`)).json();
  views.device = (await acme('GET', `/v1/devices/acme/${ids.device}`)).json();
  views.dead = (await acme('GET', '/v1/dead-letters')).json();
  views.silence = (await acme('GET', `/api/v2/silence/${ids.silence}`)).json();
  views.silences = (await acme('GET', '/api/v2/silences')).json();
  views.stats = (await acme('GET', '/v1/stats')).json();
  views.list = (await acme('GET', '/v1/incidents')).json();
  views.heartbeats = (await acme('GET', '/v1/heartbeats')).json();
  views.group = (await acme('GET', `/v1/groups/${groupKeyOf(['acme-cut'])}`)).json();
  return views;
}

before(async () => {
  s = await inProcessServer({
    config: `
tenants:
  - { id: acme, tokens: [${A}], rate_limit: { per_second: 100000, burst: 100000 } }
  - { id: beta, tokens: [${B}], rate_limit: { per_second: 100000, burst: 100000 } }
heartbeats:
  - { name: acme-only-heartbeat, tenant: acme, interval_seconds: 60 }
  - { name: beta-only-heartbeat, tenant: beta, interval_seconds: 60 }
grouping: { by: [root_cause_id], wait_seconds: 0 }
delivery: { max_retries: 0 }
adapters: [ { name: hook, type: webhook, url: "http://127.0.0.1:9/nobody", timeout_ms: 1000 } ]
`,
  });
  Object.assign(ids, await seed('acme', acme));
  await seed('beta', beta);
});
after(() => s.stop());

/** Every way to fill a route's path with acme's ids; a parameter this does not know fails the test (a new route needs a value here). */
function fill(path: string): string[] {
  const params = [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!);
  if (params.length === 0) return [path];
  const choices: Record<string, string[]> = {
    key: ids.keys,
    tenant: ['acme'],
    device: [ids.device],
    id: path.includes('silence') ? [ids.silence] : ids.dead,
    name: ['acme-only-heartbeat'],
    group_key: [groupKeyOf(['acme-cut'])],
    identifier: [own('acme').og.alias],
  };
  let out = [path];
  for (const p of params) {
    const values = choices[p];
    assert.ok(values?.length, `no acme value for {${p}} in ${path}: add one`);
    out = out.flatMap((u) => values.map((v) => u.replace(`{${p}}`, encodeURIComponent(v))));
  }
  return out;
}

test('beta calling every tenant route with acme’s ids sees nothing of acme’s and changes nothing', async () => {
  const doc = (await beta('GET', '/openapi.json')).json() as { paths: Record<string, Record<string, { security?: unknown[]; requestBody?: unknown }>> };
  const before_ = await acmeState();
  const probed = new Set<string>();
  let calls = 0;
  for (const [path, ops] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(ops)) {
      if (op.security) continue; // open routes: probes, metrics, the page
      const route = `${method.toUpperCase()} ${path}`;
      // Bodies that name acme's ids: its silence to update, its tenant for an event. Other bodies
      // (ingestion) are beta's own and are checked below, after the read probes.
      const bodies: Array<unknown | undefined> = op.requestBody
        ? path === '/api/v2/silences'
          ? [{ ...own('beta').silence, id: ids.silence }]
          : path === '/v1/events'
            ? [{ ...own('beta').event, tenant_id: 'acme' }]
            : path.startsWith('/v2/alerts/')
              ? [{ source: 'beta' }]
              : []
        : [undefined];
      for (const url of fill(path)) {
        const queries =
          path === '/v1/audit' ? ids.keys.map((k) => `?key=${encodeURIComponent(k)}`) : path.startsWith('/v2/alerts/') ? ['?identifierType=alias'] : [''];
        for (const q of queries) {
          for (const body of bodies) {
            if (path.endsWith('/stream')) {
              // The dashboard stream: read its first frame over a real socket.
              const ctl = new AbortController();
              const res = await fetch(`${s.url}${url}`, { headers: { authorization: `Bearer ${B}` }, signal: ctl.signal });
              const reader = res.body!.getReader();
              const first = new TextDecoder().decode((await reader.read()).value);
              ctl.abort();
              for (const m of markers) assert.ok(!first.includes(m), `${route}: the stream shows beta ${m}`);
            } else {
              const r = await beta(method.toUpperCase(), `${url}${q}`, body);
              for (const m of markers) assert.ok(!r.text.includes(m), `${route} ${url}${q}: beta was shown ${m}: ${r.text.slice(0, 300)}`);
              // (Opsgenie's close and acknowledge answer 202 for an alias the caller has no open alert of, as Opsgenie
              // does: that acme's alert stays open is checked with the rest of acme's state below.)
              if (/\{(key|id|device|name|group_key)\}/.test(path) || path === '/v1/audit')
                assert.ok([400, 403, 404].includes(r.status), `${route} ${url}${q}: ${r.status} ${r.text.slice(0, 200)}`);
              if (path === '/v1/events') assert.equal(r.status, 403, 'another tenant’s tenant_id');
            }
            calls++;
          }
        }
        probed.add(route);
      }
    }
  }
  const tenantRoutes = Object.entries(doc.paths).flatMap(([p, ops]) =>
    Object.entries(ops)
      .filter(([, op]) => !op.security)
      .map(([m]) => `${m.toUpperCase()} ${p}`),
  );
  assert.deepEqual([...probed].sort(), tenantRoutes.sort(), 'every tenant route was probed');
  assert.ok(tenantRoutes.length >= 20, `the API describes its routes (${tenantRoutes.length})`);
  assert.ok(calls > tenantRoutes.length, `${calls} calls`);
  assert.deepEqual(await acmeState(), before_, 'acme’s incidents, audit, device, dead letters, silences, stats and list are as they were');
});

test('beta sending acme’s very inputs makes beta’s own records: every one a CREATE or applied, acme’s untouched', async () => {
  const before_ = await acmeState();
  const o = own('acme');
  assert.equal((await beta('POST', '/v1/incidents', o.incident)).json().decision, 'CREATE', 'the same fault is beta’s own incident');
  assert.equal((await beta('POST', '/v2/enqueue', { ...o.pd, event_action: 'resolve' })).status, 202);
  assert.equal(
    (await beta('POST', '/v1/alertmanager', { ...o.am, status: 'resolved', alerts: [{ ...o.am.alerts[0]!, status: 'resolved', endsAt: now().toISOString() }] }))
      .status,
    200,
  );
  assert.equal((await beta('POST', '/v1/events', { ...o.event, tenant_id: 'beta' })).json().outcome, 'applied', 'the same device id is beta’s own device');
  assert.equal((await beta('POST', '/v1/violations', o.violation)).json().decision, 'CREATE', 'the same violation is beta’s own');
  assert.equal((await beta('DELETE', `/v1/incidents/${encodeURIComponent(ids.keys[0]!)}`)).status, 204, 'beta closes its own copy');
  const after_ = await acmeState();
  assert.deepEqual(after_, before_, 'acme’s records are as they were');
  assert.equal((after_[ids.keys[1]!] as { dedup_key?: string }).dedup_key, ids.keys[1], 'acme’s PagerDuty incident is still open after beta resolved its own');
});
