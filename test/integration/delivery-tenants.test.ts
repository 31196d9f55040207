// needs: mosquitto
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { connectAsync } from 'mqtt';
import { startSink } from '../fakes/http-fake.js';
import { openTickets, startServicenowFake } from '../fakes/servicenow-fake.js';
import { startJiraFake } from '../fakes/jira-fake.js';
import { startPagerdutyFake } from '../fakes/pagerduty-fake.js';
import { startSlackFake } from '../fakes/slack-fake.js';
import { deliveryHarness } from '../helpers/delivery.js';
import { until } from '../helpers/wait.js';

const BROKER = 'mqtt://127.0.0.1:1883';
const incident = { element_id: 'olt-7', fault_class: 'LOS', root_cause_id: 'fiber-cut-12', severity: 'CRITICAL', summary: 'OLT 7 lost signal' };
const event = (tenant: string, device: string, sequence: number, state: string) => ({
  tenant_id: tenant,
  device_id: device,
  boot_id: 'b1',
  sequence,
  state,
  observed_at: '2026-12-01T00:00:00Z',
});

// Two tenants with the same fault have the same key. Every adapter must keep
// them apart: a receiver deduplicating by Idempotency-Key, PagerDuty by
// dedup_key, ServiceNow by correlation_id, Jira by label and MQTT by topic
// would otherwise merge them, and one tenant's close would end the other's
// ticket. The expected identities come from the documented form
// (`<tenant>/<key>:<action>:<n>`), not from the code.
test('two tenants with the same fault and the same device get their own ticket, page, message and topic at every adapter; one tenant’s close ends only its own', async () => {
  const run = randomUUID().slice(0, 8);
  const [acme, beta] = [`acme-${run}`, `beta-${run}`];
  const [hook, snow, jira, pd, chat] = await Promise.all([
    startSink(200, {}),
    startServicenowFake(),
    startJiraFake(),
    startPagerdutyFake(),
    startSlackFake(100),
  ]);
  const h = deliveryHarness({
    adapters: [
      { name: 'hook', type: 'webhook', url: `${hook.url}/hook` },
      { name: 'snow', type: 'servicenow', instance_url: snow.url, username: 'onceonly', password: 'secret' },
      { name: 'jira', type: 'jira', base_url: jira.url, project: 'QA', username: 'bot@example.com', api_token: 'api-token' },
      { name: 'pd', type: 'pagerduty', routing_key: 'R0UT1NGKEY0000000000000000000001', url: `${pd.url}/v2/enqueue` },
      { name: 'chat', type: 'slack', url: chat.hookUrl, kinds: ['incident'] },
      { name: 'mes', type: 'mqtt', url: BROKER, kinds: ['event'] },
    ],
  });
  const mq = await connectAsync(BROKER, { clientId: `t-${randomUUID()}` });
  const got: Array<{ topic: string; body: any }> = [];
  mq.on('message', (topic, payload) => {
    if (payload.length > 0) got.push({ topic, body: JSON.parse(payload.toString()) });
  });
  await mq.subscribeAsync([`onceonly/event/${acme}/#`, `onceonly/event/${beta}/#`], { qos: 1 });
  try {
    const a = await h.incidents.decideIncident(incident, acme);
    const b = await h.incidents.decideIncident(incident, beta);
    assert.deepEqual([a.decision, b.decision, a.dedup_key], ['CREATE', 'CREATE', b.dedup_key], 'the same fault, the same key, in each tenant');
    const key = a.dedup_key;
    // Devices: pos-1 in both tenants, pos-2 in acme; each moves IDLE -> RUN.
    for (const [t, d] of [
      [acme, 'pos-1'],
      [acme, 'pos-2'],
      [beta, 'pos-1'],
    ] as const) {
      assert.equal((await h.events.apply(event(t, d, 1, 'IDLE'), t)).outcome, 'applied');
      assert.equal((await h.events.apply(event(t, d, 2, 'RUN'), t)).outcome, 'applied');
    }
    await h.drain();

    // webhook: one create per tenant, each header naming its tenant.
    const creates = hook.requests.filter((r) => r.body.action === 'create');
    assert.deepEqual(creates.map((r) => r.headers['idempotency-key']).sort(), [`${acme}/${key}:create:1`, `${beta}/${key}:create:1`]);
    // PagerDuty: two pages, one per tenant.
    const triggers = pd.accepted.filter((r) => r.body.event_action === 'trigger');
    assert.deepEqual(triggers.map((r) => r.body.dedup_key).sort(), [`${acme}/${key}`, `${beta}/${key}`]);
    // ServiceNow and Jira: a record and an issue each.
    assert.equal(openTickets(snow.records).length, 2, 'two ServiceNow records');
    assert.equal(jira.issues.size, 2, 'two Jira issues');
    // Slack (it posts CRITICAL incidents): a line per tenant, each naming it.
    assert.equal(chat.requests.length, 2);
    assert.ok(chat.requests.some((r) => r.body.text.includes(acme)) && chat.requests.some((r) => r.body.text.includes(beta)));
    // MQTT: a retained topic per tenant and device, three in all, with the tenant in each idempotency_key.
    await until(
      () => new Set(got.map((m) => m.topic)).size >= 3 || null,
      5000,
      () => `topics: ${JSON.stringify(got.map((m) => m.topic))}`,
    );
    assert.deepEqual(
      [...new Set(got.map((m) => m.topic))].sort(),
      [`onceonly/event/${acme}/pos-1`, `onceonly/event/${acme}/pos-2`, `onceonly/event/${beta}/pos-1`].sort(),
      'one topic per device: devices of a tenant no longer overwrite each other',
    );
    for (const m of got) assert.ok(m.body.idempotency_key.startsWith(`${m.body.tenant}/`), m.body.idempotency_key);
    assert.equal(new Set(got.map((m) => m.body.idempotency_key)).size, got.length, 'no two messages share an idempotency_key');

    // acme closes: only acme's ticket ends, everywhere.
    assert.ok(await h.incidents.closeIncident(key, acme));
    await h.drain();
    const resolves = pd.accepted.filter((r) => r.body.event_action === 'resolve');
    assert.deepEqual(
      resolves.map((r) => r.body.dedup_key),
      [`${acme}/${key}`],
      "acme's resolve names acme's page only",
    );
    assert.deepEqual(
      hook.requests.filter((r) => r.body.action === 'close').map((r) => r.headers['idempotency-key']),
      [`${acme}/${key}:close:1`],
    );
    // ServiceNow: acme's record is resolved (state 6, the stock default), beta's is not.
    const stateOf = (t: string) => openTickets(snow.records).find((r) => String(r.description).includes(`tenant: ${t}`))?.state;
    assert.deepEqual([stateOf(acme), stateOf(beta) !== '6'], ['6', true], "only acme's ServiceNow record is resolved");
    const failed = h.settled.filter((s) => s.outcome !== 'delivered' && s.outcome !== 'skipped');
    assert.deepEqual(failed, [], 'every call was taken (or was not for that adapter)');
  } finally {
    // Clear the retained messages this test left on the broker.
    for (const t of new Set(got.map((m) => m.topic))) await mq.publishAsync(t, '', { qos: 1, retain: true });
    await mq.endAsync();
    await h.close();
    await Promise.all([hook, snow, jira, pd, chat].map((f) => f.close()));
  }
});
