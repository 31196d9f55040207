import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { jiraLabel } from '../helpers/identities.js';
import { evaluateJql, type JiraIssue, startJiraFake } from '../fakes/jira-fake.js';
import { inProcessServer, type InProcessServer } from '../helpers/server.js';
import { quietAfter } from '../helpers/settle.js';

const A = 'token-of-tenant-acme-0001';
const B = 'token-of-tenant-beta-0002';

let jira: Awaited<ReturnType<typeof startJiraFake>>;
let s: InProcessServer;
before(async () => {
  jira = await startJiraFake();
  s = await inProcessServer({
    config: `tenants:\n  - { id: acme, tokens: [${A}] }\n  - { id: beta, tokens: [${B}] }\nadapters: [ { name: jira, type: jira, base_url: "${jira.url}", project: OPS, username: bot@example.com, api_token: api-token } ]\n`,
  });
});
after(async () => {
  await s.stop();
  await jira.close();
});

const enqueue = (token: string, body: object) =>
  s.app.inject({ method: 'POST', url: '/v2/enqueue', headers: { authorization: `Bearer ${token}` }, payload: body });
const settled = (since: number) => quietAfter(s, () => jira.requests.length, since);

// Each, pasted into `labels = "<key>"`, would match acme's issue on Jira: an OR, a negation, an order, a quote escape.
const HOSTILE = [
  'k" OR labels is not EMPTY OR labels = "x',
  'k" OR labels != "nothing',
  'k\\" OR labels is not EMPTY OR labels = \\"x',
  'k" ORDER BY key DESC',
  'k OR project = OPS',
];

test('the fake reads JQL as Jira does: the hostile keys, pasted raw, would match another tenant’s issue', () => {
  const other: JiraIssue = {
    key: 'OPS-1',
    fields: {
      summary: 's',
      description: '',
      labels: ['onceonly', 'onceonly-acmeacmeacmeacmeacmeacme'],
      project: { key: 'OPS' },
      issuetype: { name: 'Task' },
      status: { name: 'To Do', statusCategory: { key: 'new' } },
    },
    comments: [],
  };
  const pasted = HOSTILE.slice(0, 2).map((k) => evaluateJql(`labels = "${k}" ORDER BY key ASC`));
  assert.ok(
    pasted.every((m) => m?.(other) === true),
    'an adapter that pasted the key would reach acme’s issue',
  );
  // One that escaped quotes but not backslashes would too.
  const naive = evaluateJql(`labels = "${HOSTILE[2]!.replace(/"/g, '\\"')}" ORDER BY key ASC`);
  assert.equal(naive?.(other), true, 'a naive escaper would reach acme’s issue');
  assert.equal(evaluateJql(`labels = "${jiraLabel({ tenant: 'beta', kind: 'incident', key: HOSTILE[0]! })}" ORDER BY key ASC`)?.(other), false);
});

test('a key holding JQL operators cannot reach another tenant’s Jira issue', async () => {
  const created = await s.app.inject({
    method: 'POST',
    url: '/v1/incidents',
    headers: { authorization: `Bearer ${A}` },
    payload: { element_id: 'olt-1', fault_class: 'LOS', root_cause_id: 'cut', severity: 'MAJOR' },
  });
  assert.equal(created.statusCode, 200);
  await settled(0);
  assert.equal(jira.issues.size, 1);
  const acme = structuredClone([...jira.issues.values()][0]!);

  for (const dedup_key of HOSTILE) {
    let since = jira.requests.length;
    const trigger = await enqueue(B, { routing_key: 'r', event_action: 'trigger', dedup_key, payload: { summary: 'beta', source: 'h', severity: 'error' } });
    assert.equal(trigger.statusCode, 202, trigger.body);
    await settled(since);
    since = jira.requests.length;
    const resolve = await enqueue(B, { routing_key: 'r', event_action: 'resolve', dedup_key });
    assert.equal(resolve.statusCode, 202);
    await settled(since);
  }
  const after = jira.issues.get(acme.key)!;
  assert.deepEqual(
    { status: after.fields.status.name, comments: after.comments, summary: after.fields.summary },
    { status: acme.fields.status.name, comments: acme.comments, summary: acme.fields.summary },
    'acme’s issue is untouched',
  );
  const beta = [...jira.issues.values()].filter((i) => i.key !== acme.key);
  assert.equal(beta.length, HOSTILE.length, 'beta got its own issue for each key');
  for (const [n, key] of HOSTILE.entries()) {
    const label = jiraLabel({ tenant: 'beta', kind: 'incident', key: `pd:${key}` });
    const mine = beta.filter((i) => i.fields.labels.includes(label));
    assert.equal(mine.length, 1, `hostile key ${n} has exactly one issue, under its hashed label`);
    assert.equal(mine[0]!.fields.status.name, 'Done', 'and its resolve closed that one');
  }
  // Every query sent was one label clause of hex, whatever the key held (each
  // key's first lookup searches; its resolve reads the issue onceonly recorded).
  assert.ok(jira.searches.length >= HOSTILE.length);
  for (const jql of jira.searches) assert.match(jql, /^labels = "onceonly-[0-9a-f]{24}" ORDER BY key ASC$/);
});
