import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigError, parseConfig } from '../../src/config/load.js';
import '../../src/delivery/adapters/index.js';
import { startSink } from '../fakes/http-fake.js';
import { startJiraFake } from '../fakes/jira-fake.js';
import { startPagerdutyFake } from '../fakes/pagerduty-fake.js';
import { startServicenowFake } from '../fakes/servicenow-fake.js';
import { startSlackFake } from '../fakes/slack-fake.js';
import { deliveryHarness } from '../helpers/delivery.js';
import { inProcessServer } from '../helpers/server.js';
import { caughtUp } from '../helpers/settle.js';
import { until } from '../helpers/wait.js';
import { closedAfterEach } from '../helpers/keep.js';

/**
 * Ticket fields: an adapter's `fields:` are Liquid templates over the
 * entry's labels, severity, summary, key, tenant, kind and the config's
 * lookups, rendered at delivery into the shapes each receiver takes.
 */

const keep = closedAfterEach();

const incident = (over: Record<string, unknown> = {}) => ({
  element_id: 'olt-7',
  fault_class: 'LOS',
  root_cause_id: 'cut-1',
  severity: 'MAJOR',
  summary: 'OLT 7 lost signal',
  labels: { team: 'net', region: 'eu' },
  ...over,
});
const lookups = { groups: { eu: 'NOC EU', us: 'NOC US' } };
const jiraAt = (url: string, fields: Record<string, string>) => ({
  name: 'jira',
  type: 'jira',
  base_url: url,
  project: 'NOC',
  username: 'bot@example.com',
  api_token: 'api-token',
  fields,
});

test('ServiceNow: columns rendered from labels and a lookup table, on the create and on each update', async () => {
  const snow = keep(await startServicenowFake());
  const h = keep(
    deliveryHarness({
      lookups,
      adapters: [
        {
          name: 'snow',
          type: 'servicenow',
          instance_url: snow.url,
          username: 'onceonly',
          password: 'secret',
          fields: {
            assignment_group: '{{ lookups.groups[labels.region] }}',
            cmdb_ci: '{{ labels.element_id }}',
            category: 'network',
            description: 'Runbook: https://wiki.example/{{ labels.team }}',
          },
        },
      ],
    }),
  );
  await h.incidents.decideIncident(incident());
  await h.drain();
  const [rec] = [...snow.records.values()];
  assert.deepEqual([rec?.assignment_group, rec?.cmdb_ci, rec?.category], ['NOC EU', 'olt-7', 'network']);
  assert.equal(rec?.description, 'Runbook: https://wiki.example/net', "a templated column replaces the adapter's own");
  // The fault moves region and worsens: the update carries the latest labels' rendering.
  await h.incidents.decideIncident(incident({ severity: 'CRITICAL', labels: { team: 'net', region: 'us' } }));
  await h.drain();
  assert.equal(rec?.assignment_group, 'NOC US');
  assert.deepEqual(
    h.settled.map((s) => s.outcome),
    ['delivered', 'delivered'],
  );
});

test('Jira: project, issue type, priority, components and labels in the shapes Jira takes; a field off the screen is a dead letter with Jira’s words', async () => {
  const jira = keep(await startJiraFake({ searchLagMs: 0 }));
  const h = keep(
    deliveryHarness({
      adapters: [
        jiraAt(jira.url, {
          project: '{{ labels.team | upcase }}',
          issuetype: 'Incident',
          priority: '{% if severity == "CRITICAL" %}Highest{% else %}High{% endif %}',
          components: 'Access, {{ labels.region | upcase }}',
          labels: 'region-{{ labels.region }} team-{{ labels.team }}',
        }),
      ],
    }),
  );
  await h.incidents.decideIncident(incident());
  await h.drain();
  const [issue] = [...jira.issues.values()];
  assert.ok(issue, JSON.stringify(h.settled));
  const f = issue.fields as unknown as Record<string, unknown>;
  assert.deepEqual(f.project, { key: 'NET' });
  assert.deepEqual(f.issuetype, { name: 'Incident' });
  assert.deepEqual(f.priority, { name: 'High' });
  assert.deepEqual(f.components, [{ name: 'Access' }, { name: 'EU' }]);
  assert.deepEqual((f.labels as string[]).slice(2), ['region-eu', 'team-net']);
  assert.equal((f.labels as string[])[0], 'onceonly', "the adapter's own labels stay: it finds the issue by them");
  assert.match(issue.key, /^NET-\d+$/);

  const off = keep(
    deliveryHarness({
      adapters: [jiraAt(jira.url, { customfield_10042: '{{ labels.region }}' })],
    }),
  );
  await off.incidents.decideIncident(incident({ element_id: 'olt-8' }));
  await off.drain();
  const [dead] = off.settled;
  assert.equal(dead?.outcome, 'dead');
  assert.match(dead?.error ?? '', /Field 'customfield_10042' cannot be set/);
  assert.doesNotMatch(dead?.error ?? '', /api-token/);
});

test('PagerDuty payload fields, Slack text with what it inserts escaped, and webhook fields', async () => {
  const pd = keep(await startPagerdutyFake());
  const slack = keep(await startSlackFake(100));
  const hook = keep(await startSink(200, {}));
  const h = keep(
    deliveryHarness({
      adapters: [
        {
          name: 'pd',
          type: 'pagerduty',
          url: `${pd.url}/v2/enqueue`,
          routing_key: 'R0UTINGKEY0000000000000000000000',
          fields: { component: '{{ labels.element_id }}', class: '{{ labels.fault_class }}', group: '{{ labels.team }}' },
        },
        { name: 'chat', type: 'slack', url: slack.hookUrl, fields: { text: '<!here> {{ labels.team }}: {{ summary }}' } },
        { name: 'hook', type: 'webhook', url: `${hook.url}/in`, fields: { team: '{{ labels.team }}', tenant: '{{ tenant }}' } },
      ],
    }),
  );
  await h.incidents.decideIncident(incident({ severity: 'CRITICAL', summary: 'cut <!channel> & more' }));
  await h.drain();
  const payload = (pd.accepted[0]?.body as { payload?: Record<string, unknown> } | undefined)?.payload;
  assert.deepEqual([payload?.component, payload?.class, payload?.group], ['olt-7', 'LOS', 'net']);
  assert.equal(
    (slack.posted[0]?.body as { text?: string } | undefined)?.text,
    '<!here> net: cut &lt;!channel&gt; &amp; more',
    'the literal text stays, what it inserts is escaped',
  );
  assert.deepEqual((hook.requests[0]?.body as { fields?: unknown } | undefined)?.fields, { team: 'net', tenant: 'default' });
});

// Planted fault it catches: templates run without the own-property rule (constructor reads as Object's).
test('hostile labels and templates: a label is printed, never run; inherited names read as nothing; a runaway render is a dead letter', async () => {
  const hook = keep(await startSink(200, {}));
  const fields = {
    team: '{{ labels.team }}',
    inherited: '[{{ constructor }}|{{ labels.constructor }}|{{ labels.__proto__ }}|{{ lookups.toString }}]',
  };
  const h = keep(deliveryHarness({ adapters: [{ name: 'hook', type: 'webhook', url: `${hook.url}/in`, fields }] }));
  await h.incidents.decideIncident(incident({ labels: { team: '{{ 7 | times: 7 }}{% for i in (1..9) %}x{% endfor %}' } }));
  await h.drain();
  assert.deepEqual((hook.requests[0]?.body as { fields?: unknown } | undefined)?.fields, {
    team: '{{ 7 | times: 7 }}{% for i in (1..9) %}x{% endfor %}',
    inherited: '[|||]',
  });

  for (const [template, reason] of [
    ['{% for i in (1..100000000) %}x{% endfor %}', /memory alloc limit exceeded/],
    ['{{ labels.team }}'.repeat(9), /rendered 36864 characters; a field holds at most 32768/],
    // A chain of filters multiplying a 4 KiB label: stopped at the first filter that makes too much, whatever the output.
    [
      '{{ labels.team | replace: "x", "xxxxxxxx" | replace: "x", "xxxxxxxx" | replace: "x", "xx" | size }}',
      /the filter replace made 524288 characters; a filter makes at most 262144/,
    ],
    ['{{ labels.team | replace: "x", "xxx" | split: "" | size }}', /the filter split made 12288 items; a filter makes at most 10000/],
  ] as const) {
    const r = keep(deliveryHarness({ adapters: [{ name: 'hook', type: 'webhook', url: `${hook.url}/in`, fields: { x: template } }] }));
    await r.incidents.decideIncident(incident({ labels: { team: 'x'.repeat(4096) } }));
    await r.drain();
    assert.equal(r.settled[0]?.outcome, 'dead');
    assert.equal(r.settled[0]?.reason, 'render');
    assert.match(r.settled[0]?.error ?? '', /^field x did not render: /);
    assert.match(r.settled[0]?.error ?? '', reason);
  }
});

// The render limit is wall-clock time: a paused process trips it as a runaway loop does, so running
// past it is retried on the backoff, and parked only when the retries run out.
test('a render that runs past its time is retried, then parked saying why; it is never sent', async () => {
  const hook = keep(await startSink(200, {}));
  const loop = '{% for i in (1..1000) %}{% for j in (1..1000) %}{% for k in (1..1000) %}{% endfor %}{% endfor %}{% endfor %}';
  const r = keep(
    deliveryHarness({
      delivery: { max_retries: 1, base_delay_ms: 1000, max_delay_ms: 1000 },
      adapters: [{ name: 'hook', type: 'webhook', url: `${hook.url}/in`, fields: { x: loop } }],
    }),
  );
  await r.incidents.decideIncident(incident());
  await r.drain();
  assert.deepEqual([r.settled[0]?.outcome, r.settled[0]?.reason], ['retried', 'render']);
  assert.match(r.settled[0]?.error ?? '', /^field x did not render: template render limit exceeded/);
  r.clock.advance(1000);
  await r.drain();
  assert.deepEqual([r.settled[1]?.outcome, r.settled[1]?.reason], ['dead', 'exhausted']);
  assert.match(r.settled[1]?.error ?? '', /^retries exhausted \(1\): field x did not render: template render limit exceeded/);
  assert.equal(hook.requests.length, 0, 'nothing was sent half-rendered');
});

test('a template that does not parse, or a field an adapter does not take, is refused at load naming the adapter’s field', () => {
  const cases: Array<[string, RegExp]> = [
    [
      '{ name: s, type: servicenow, instance_url: "http://x", username: u, password: p, fields: { cmdb_ci: "{% include \'secrets\' %}" } }',
      /adapters\.0\.fields\.cmdb_ci: the template does not parse: the tag \{% include %\} is not allowed/,
    ],
    [
      '{ name: s, type: servicenow, instance_url: "http://x", username: u, password: p, fields: { cmdb_ci: "{{ labels.x | nosuch }}" } }',
      /adapters\.0\.fields\.cmdb_ci: the template does not parse: undefined filter: nosuch/,
    ],
    [
      '{ name: s, type: servicenow, instance_url: "http://x", username: u, password: p, fields: { cmdb_ci: "{{ labels.x" } }',
      /adapters\.0\.fields\.cmdb_ci: the template does not parse: .*not closed/,
    ],
    [
      '{ name: s, type: servicenow, instance_url: "http://x", username: u, password: p, fields: { correlation_id: "x" } }',
      /adapters\.0\.fields\.correlation_id: .*not one the adapter sets itself/,
    ],
    [
      '{ name: j, type: jira, base_url: "http://x", project: P, username: u, api_token: t, fields: { summary: "x" } }',
      /adapters\.0\.fields\.summary: must be one of project, issuetype/,
    ],
    ['{ name: c, type: slack, url: "http://x", fields: { blocks: "x" } }', /adapters\.0\.fields\.blocks: must be text/],
    [
      '{ name: p, type: pagerduty, routing_key: k, fields: { severity: "x" } }',
      /adapters\.0\.fields\.severity: must be one of component, group, class, custom_details/,
    ],
    ['{ name: h, type: webhook, url: "http://x", fields: { x: "{% liquid\\n include \'a\' %}" } }', /the tag \{% liquid %\} is not allowed/],
  ];
  for (const [adapter, message] of cases) {
    assert.throws(
      () => parseConfig(`adapters:\n  - ${adapter}\n`, 'test.yaml'),
      (err: unknown) => err instanceof ConfigError && message.test(err.message),
      adapter,
    );
  }
  assert.throws(
    () => parseConfig('lookups: { "bad-name": { a: b } }\n', 'test.yaml'),
    (err: unknown) => err instanceof ConfigError && /lookups/.test(err.message),
  );
});

test("a grouped adapter's fields render from the group: its by values and its highest severity", async () => {
  const hook = keep(await startSink(200, {}));
  const s = await inProcessServer({
    store: 'memory:',
    config: `grouping: { by: [root_cause_id], wait_seconds: 0 }
adapters:
  - { name: tickets, type: webhook, url: "${hook.url}/groups", grouped: true, fields: { rc: "{{ labels.root_cause_id }}", sev: "{{ severity }}", kind: "{{ kind }}" } }
`,
  });
  keep({ close: () => s.stop() });
  await s.post('/v1/incidents', incident({ element_id: 'olt-1', root_cause_id: 'cut-9', severity: 'MINOR' }));
  await s.post('/v1/incidents', incident({ element_id: 'olt-2', root_cause_id: 'cut-9', severity: 'CRITICAL' }));
  await until(
    () => hook.requests.some((r) => (r.body as { fields?: { sev?: string } }).fields?.sev === 'CRITICAL') || null,
    10_000,
    () => JSON.stringify(hook.requests.map((r) => r.body)),
  );
  await caughtUp(s);
  const last = hook.requests.at(-1)?.body as { kind: string; fields: unknown };
  assert.equal(last.kind, 'group');
  assert.deepEqual(last.fields, { rc: 'cut-9', sev: 'CRITICAL', kind: 'group' });
});
