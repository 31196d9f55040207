import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startSink, type FakeServer } from '../fakes/http-fake.js';
import { inProcessServer, type InProcessServer } from '../helpers/server.js';
import { caughtUp } from '../helpers/settle.js';

const H = 3_600_000;
const incident = (severity: string, labels?: Record<string, string>) => ({
  element_id: 'olt-9',
  fault_class: 'LOS',
  root_cause_id: 'cut-9',
  severity,
  ...(labels ? { labels } : {}),
});

let s: InProcessServer;
let hook: FakeServer;
before(async () => {
  hook = await startSink(200, {});
  s = await inProcessServer({ store: 'memory:', config: `adapters:\n  - { name: hook, type: webhook, url: "${hook.url}/in" }\n` });
});
after(async () => {
  await s.stop();
  await hook.close();
});

test('labels are neither identity nor fingerprint; each change carries the latest arrival’s labels', async () => {
  const bare = await s.post('/v1/incidents', incident('MAJOR'));
  assert.equal(bare.body.decision, 'CREATE');
  const labelled = await s.post('/v1/incidents', incident('MAJOR', { team: 'net', region: 'eu' }));
  assert.deepEqual([labelled.body.decision, labelled.body.dedup_key], ['SUPPRESS', bare.body.dedup_key], 'same fault, same key: labels changed nothing');
  const update = await s.post('/v1/incidents', incident('CRITICAL', { team: 'core' }));
  assert.deepEqual([update.body.decision, update.body.dedup_key], ['UPDATE', bare.body.dedup_key]);
  await caughtUp(s);
  const got = hook.requests.map((r) => [r.body.action, r.body.data.labels ?? null]);
  assert.deepEqual(got, [
    ['create', null],
    ['update', { team: 'core' }],
  ]);
});

test('a silence matches an incident’s labels; an identity field wins over a label of its name', async () => {
  const silence = (name: string, value: string) =>
    s.post('/api/v2/silences', {
      matchers: [{ name, value, isRegex: false, isEqual: true }],
      startsAt: new Date(s.clock.now()).toISOString(),
      endsAt: new Date(s.clock.now() + H).toISOString(),
      createdBy: 'noc',
      comment: `${name} ${value}`,
    });
  assert.equal((await silence('team', 'storage')).status, 200);
  const muted = await s.post('/v1/incidents', { ...incident('MAJOR', { team: 'storage' }), element_id: 'disk-1' });
  assert.equal(muted.body.muted?.by, 'silence');
  const other = await s.post('/v1/incidents', { ...incident('MAJOR', { team: 'net' }), element_id: 'disk-2' });
  assert.equal(other.body.muted, null);
  // A label named like an identity field does not replace it: the silence on element_id still decides.
  assert.equal((await silence('element_id', 'sw-1')).status, 200);
  const spoof = await s.post('/v1/incidents', { ...incident('MAJOR', { element_id: 'sw-1' }), element_id: 'sw-2' });
  assert.equal(spoof.body.muted, null, 'a label cannot pose as the element');
  const real = await s.post('/v1/incidents', { ...incident('MAJOR', { element_id: 'elsewhere' }), element_id: 'sw-1' });
  assert.equal(real.body.muted?.by, 'silence');
});

test("GET shows an incident's identity as its create received it and its latest summary and labels; an alert's labels or PagerDuty's source fields take their place", async () => {
  const first = await s.post('/v1/incidents', {
    element_id: 'OLT-10',
    fault_class: 'los',
    root_cause_id: 'cut-10',
    severity: 'MAJOR',
    summary: 'first',
    labels: { team: 'net' },
  });
  const key = first.body.dedup_key as string;
  await s.post('/v1/incidents', {
    element_id: 'OLT-10',
    fault_class: 'los',
    root_cause_id: 'cut-10',
    severity: 'MAJOR',
    summary: 'latest',
    labels: { region: 'eu' },
  });
  const view = (await s.get(`/v1/incidents/${key}`)).body;
  assert.deepEqual([view.element_id, view.fault_class, view.root_cause_id, view.summary, view.labels], ['OLT-10', 'los', 'cut-10', 'latest', { region: 'eu' }]);
  const listed = (await s.get('/v1/incidents')).body.incidents.find((i: { dedup_key: string }) => i.dedup_key === key);
  assert.deepEqual([listed.summary, listed.labels], ['latest', { region: 'eu' }], 'the list shows the same');

  const am = await s.post('/v1/alertmanager', {
    version: '4',
    status: 'firing',
    receiver: 'onceonly',
    groupKey: '{}:{}',
    alerts: [
      {
        status: 'firing',
        labels: { alertname: 'LinkDown', instance: 'r1' },
        annotations: { summary: 'link down on r1' },
        startsAt: new Date().toISOString(),
        fingerprint: 'f00d',
      },
    ],
  });
  assert.equal(am.status, 200);
  const amKey = (await s.get('/v1/incidents')).body.incidents.find((i: { dedup_key: string }) => i.dedup_key.startsWith('am:')).dedup_key;
  const amView = (await s.get(`/v1/incidents/${encodeURIComponent(amKey)}`)).body;
  assert.deepEqual([amView.element_id, amView.summary, amView.labels], [undefined, 'link down on r1', { alertname: 'LinkDown', instance: 'r1' }]);

  const pd = await s.post('/v2/enqueue', {
    routing_key: 'r',
    event_action: 'trigger',
    dedup_key: 'core-3',
    payload: { summary: 'core 3 down', source: 'core-3', severity: 'critical', component: 'bgp', custom_details: { n: 1 } },
  });
  assert.equal(pd.status, 202);
  const pdView = (await s.get('/v1/incidents/pd%3Acore-3')).body;
  assert.deepEqual([pdView.summary, pdView.labels], ['core 3 down', { source: 'core-3', component: 'bgp' }]);
});
