import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { LIMIT_DEFAULTS } from '../../src/config/schema.js';
import { MAX_CARRIED_BYTES, MAX_DEPTH, MAX_LABEL_NAME, MAX_LABEL_VALUE } from '../../src/inputs/limits.js';
import { inProcessServer, type InProcessServer } from '../helpers/server.js';

const incident = { element_id: 'olt-1', fault_class: 'LOS', root_cause_id: 'cut', severity: 'MAJOR' };
const nested = (depth: number): unknown => {
  let v: unknown = 'leaf';
  for (let i = 0; i < depth; i++) v = { d: v };
  return v;
};
const alert = (i: number) => ({
  status: 'firing',
  labels: { alertname: 'Down', instance: `n${i}` },
  annotations: {},
  startsAt: '2026-11-30T12:00:00Z',
  fingerprint: `fp${i}`,
});
const am = (n: number) => ({ version: '4', status: 'firing', receiver: 'r', alerts: Array.from({ length: n }, (_, i) => alert(i)) });

describe('input limits, every route', () => {
  let s: InProcessServer;
  /** POSTs raw JSON text, so escapes like \ud800 reach the server as written. */
  const raw = async (url: string, json: string, token?: string) => {
    const res = await s.app.inject({
      method: 'POST',
      url,
      payload: json,
      headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    });
    return { status: res.statusCode, body: JSON.parse(res.body) as any };
  };
  const refused = async (url: string, json: string, field: RegExp) => {
    const r = await raw(url, json);
    assert.equal(r.status, 400, `${url} ${json.slice(0, 80)}: ${JSON.stringify(r.body)}`);
    const text = JSON.stringify(r.body);
    assert.match(text, field, `names the field: ${text}`);
  };

  before(async () => {
    s = await inProcessServer({ store: 'memory' });
  });
  after(() => s.stop());

  test('control characters and lone surrogates are refused in identity fields, keys and free text, naming the field', async () => {
    const body = (over: Record<string, unknown>) => JSON.stringify({ ...incident, ...over });
    await refused('/v1/incidents', body({ element_id: 'olt\u00001' }), /element_id.*control/);
    await refused('/v1/incidents', body({ fault_class: 'LOS\u001b[31m' }), /fault_class.*control/);
    await refused('/v1/incidents', '{"element_id":"olt-\\ud800","fault_class":"LOS","root_cause_id":"c","severity":"MAJOR"}', /element_id.*surrogate/);
    await refused('/v1/incidents', body({ summary: 'bell\u0007' }), /summary.*control/);
    await refused('/v1/incidents', '{"element_id":"o","fault_class":"L","root_cause_id":"c","severity":"MAJOR","summary":"\\udc00x"}', /summary.*surrogate/);
    await refused('/v1/incidents', body({ details: { note: 'nul\u0000' } }), /details.*control/);
    await refused('/v1/incidents', body({ details: { 'k\u0000': 1 } }), /details.*key/);
    await refused('/v1/incidents', body({ summary: 'x'.repeat(1025) }), /summary.*1024/);
    await refused(
      '/v1/events',
      JSON.stringify({ tenant_id: 't', device_id: 'd\u0000', boot_id: 'b', sequence: 1, state: 'UP', observed_at: '2026-11-30T12:00:00Z' }),
      /device_id/,
    );
    await refused(
      '/v1/violations',
      JSON.stringify({ process_id: 'p\u0000', rule_id: 'nelson_1', timestamp: 1, value: 1, center: 0, ucl: 1, lcl: -1 }),
      /process_id/,
    );
    await refused('/v1/alertmanager', JSON.stringify({ ...am(1), alerts: [{ ...alert(0), labels: { alertname: 'x\u0000' } }] }), /labels/);
    const pd = await raw('/v2/enqueue', JSON.stringify({ routing_key: 'r', event_action: 'resolve', dedup_key: 'k\u0000' }));
    assert.equal(pd.status, 400);
    assert.match(JSON.stringify(pd.body.errors), /dedup_key.*control/);
    const pdLong = await raw('/v2/enqueue', JSON.stringify({ routing_key: 'r', event_action: 'resolve', dedup_key: 'k'.repeat(256) }));
    assert.equal(pdLong.status, 400);
  });

  test(`Alertmanager label names are 1..${MAX_LABEL_NAME} characters and values at most ${MAX_LABEL_VALUE}, without control characters; annotations are free text`, async () => {
    const withLabels = (labels: Record<string, string>, annotations: Record<string, string> = {}) =>
      JSON.stringify({ ...am(1), alerts: [{ ...alert(0), labels: { alertname: 'A', ...labels }, annotations }] });
    await refused('/v1/alertmanager', withLabels({ ['n'.repeat(MAX_LABEL_NAME + 1)]: 'v' }), new RegExp(`labels.*at most ${MAX_LABEL_NAME}`));
    await refused('/v1/alertmanager', withLabels({ '': 'v' }), /labels.*empty/);
    await refused('/v1/alertmanager', withLabels({ job: 'v'.repeat(MAX_LABEL_VALUE + 1) }), new RegExp(`labels.*at most ${MAX_LABEL_VALUE}`));
    await refused('/v1/alertmanager', withLabels({ job: 'two\nlines' }), /labels.*control/);
    await refused('/v1/alertmanager', withLabels({}, { ['d'.repeat(MAX_LABEL_NAME + 1)]: 'x' }), /annotations/);
    // At the limits, and a multi-line description: accepted.
    const ok = await raw(
      '/v1/alertmanager',
      withLabels({ ['n'.repeat(MAX_LABEL_NAME)]: 'v'.repeat(MAX_LABEL_VALUE), empty: '' }, { description: 'line one\nline two\ttabbed' }),
    );
    assert.equal(ok.status, 200, JSON.stringify(ok.body));
  });

  test('tab and line breaks stay allowed in free text', async () => {
    const r = await raw(
      '/v1/incidents',
      JSON.stringify({ ...incident, element_id: 'olt-ok', summary: 'line one\n\tline two\r\n', details: { log: 'a\tb\nc' } }),
    );
    assert.equal(r.status, 200, JSON.stringify(r.body));
  });

  test(`objects carried along: at most ${MAX_DEPTH} levels and ${MAX_CARRIED_BYTES / 1024} KiB; an 80,000-deep body (just under the body limit) is refused cheaply`, async () => {
    const body = (details: unknown) => JSON.stringify({ ...incident, element_id: 'olt-deep', details });
    assert.equal((await raw('/v1/incidents', body(nested(MAX_DEPTH - 1)))).status, 200, 'at the limit');
    await refused('/v1/incidents', body(nested(MAX_DEPTH + 1)), /details.*levels deep/);
    await refused('/v1/incidents', body({ blob: 'x'.repeat(MAX_CARRIED_BYTES) }), /details.*KiB/);
    // Built as text: no recursion on this side either.
    const deep = `${'{"d":'.repeat(80_000)}1${'}'.repeat(80_000)}`;
    const r = await raw('/v1/incidents', `{"element_id":"o","fault_class":"L","root_cause_id":"c","severity":"MAJOR","details":${deep}}`);
    assert.equal(r.status, 400, JSON.stringify(r.body).slice(0, 200));
    await refused(
      '/v1/alertmanager',
      JSON.stringify({ ...am(1), alerts: [{ ...alert(0), annotations: { a: 'x'.repeat(MAX_CARRIED_BYTES) } }] }),
      /annotations/,
    );
    const pd = await raw(
      '/v2/enqueue',
      JSON.stringify({ routing_key: 'r', event_action: 'trigger', payload: { summary: 's', source: 'h', severity: 'error', custom_details: nested(40) } }),
    );
    assert.equal(pd.status, 400);
    assert.match(JSON.stringify(pd.body.errors), /custom_details.*levels deep/);
  });

  test(`an Alertmanager post of more than ${LIMIT_DEFAULTS.alerts_per_post} alerts (the default) is 413 and decides none of them`, async () => {
    const r = await raw('/v1/alertmanager', JSON.stringify(am(LIMIT_DEFAULTS.alerts_per_post + 1)));
    assert.equal(r.status, 413);
    assert.equal(r.body.error.code, 'payload_too_large');
    assert.match(r.body.error.message, /max_alerts/);
    const ok = await raw('/v1/alertmanager', JSON.stringify(am(3)));
    assert.equal(ok.status, 200);
  });

  test('nothing refused above changed anything', async () => {
    const keys = (await s.get('/v1/incidents?limit=1000')).body.incidents.map((i: { dedup_key: string }) => i.dedup_key.slice(0, 3));
    // olt-ok, olt-deep (at the limit) and the 3 alerts of the last post: nothing else.
    assert.deepEqual(keys.sort(), ['am:', 'am:', 'am:', 'ded', 'ded']);
  });
});

describe('each alert of an Alertmanager post counts against the tenant', () => {
  let s: InProcessServer;
  const T = 'token-of-tenant-alerts-01';
  before(async () => {
    s = await inProcessServer({ store: 'memory', config: `tenants:\n  - { id: a, tokens: [${T}], rate_limit: { per_second: 1, burst: 10 } }\n` });
  });
  after(() => s.stop());

  test('a post of 8 alerts takes 8 tokens: the next one of 8 is 429 and decides nothing; more than the burst is 413', async () => {
    const post = (n: number) => s.app.inject({ method: 'POST', url: '/v1/alertmanager', headers: { authorization: `Bearer ${T}` }, payload: am(n) });
    assert.equal((await post(8)).statusCode, 200);
    const second = await post(8);
    assert.equal(second.statusCode, 429, second.body);
    assert.ok(Number(second.headers['retry-after']) >= 1);
    assert.equal((await post(11)).statusCode, 413, 'more alerts than the burst could never pass');
    s.clock.advance(20_000); // the bucket refills, so the list below is not itself refused
    const list = await s.app.inject({ method: 'GET', url: '/v1/incidents', headers: { authorization: `Bearer ${T}` } });
    assert.equal(JSON.parse(list.body).incidents.length, 8);
  });

  // Planted fault it catches: the alerts validated before they are charged (validation work past the rate).
  test('a post of 8 invalid alerts takes 8 tokens too; past them, invalid alerts are 429 before they are validated', async () => {
    s.clock.advance(20_000);
    const post = (payload: object) => s.app.inject({ method: 'POST', url: '/v1/alertmanager', headers: { authorization: `Bearer ${T}` }, payload });
    const bad = { ...am(8), alerts: am(8).alerts.map((a) => ({ ...a, startsAt: 'not a time' })) };
    const first = await post(bad);
    assert.equal(first.statusCode, 400, first.body);
    const second = await post(bad);
    assert.equal(second.statusCode, 429, `the bucket was spent by the invalid post: ${second.body}`);
    s.clock.advance(20_000);
    const list = await s.app.inject({ method: 'GET', url: '/v1/incidents', headers: { authorization: `Bearer ${T}` } });
    assert.equal(JSON.parse(list.body).incidents.length, 8, 'the invalid posts decided nothing');
  });
});

// Planted fault it catches: the route's bound fixed at 1,000 instead of limits.alerts_per_post.
describe('alerts per post is a config value, and a reload changes it', () => {
  let s: InProcessServer;
  before(async () => {
    s = await inProcessServer({ store: 'memory', config: 'limits: { alerts_per_post: 5 }\n' });
  });
  after(() => s.stop());

  test('past the configured count: 413 naming it, nothing decided; raised by a reload, the same post passes', async () => {
    const over = await s.post('/v1/alertmanager', am(6));
    assert.equal(over.status, 413);
    assert.match(over.body.error.message, /^at most 5 alerts per post \(this one has 6\)/);
    assert.equal((await s.get('/v1/incidents')).body.incidents.length, 0);
    s.writeConfig('limits: { alerts_per_post: 6 }\n');
    s.config.reload();
    assert.equal((await s.post('/v1/alertmanager', am(6))).status, 200);
    assert.equal((await s.get('/v1/incidents')).body.incidents.length, 6);
  });
});
