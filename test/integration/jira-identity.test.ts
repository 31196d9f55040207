/**
 * A Jira issue is a key's only by onceonly's own mark. A label is what a
 * search finds candidates by, and anyone who can make an issue, or make
 * onceonly render a label, can put another key's `onceonly-…` label on one:
 * tenant acme renders globex's label through a `labels` template, or makes a
 * bait issue carrying it in Jira. globex's create must make its own issue,
 * never comment on (and later be closed with) the bait.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { incidentKey } from '../../src/core/identity.js';
import { JIRA_MARK, jiraLabel } from '../../src/delivery/adapters/jira.js';
import { type JiraIssue, startJiraFake } from '../fakes/jira-fake.js';
import { deliveryHarness } from '../helpers/delivery.js';
import { closedAfterEach } from '../helpers/keep.js';

const keep = closedAfterEach();
const fault = { element_id: 'core-1', fault_class: 'LOS', root_cause_id: 'cut', severity: 'MAJOR' };
const globexKey = incidentKey(fault);
const globexLabel = jiraLabel({ tenant: 'globex', kind: 'incident', key: globexKey });
/** An open issue as someone else made it in Jira: its labels, and an issue property where given. */
const openIssue = (key: string, summary: string, labels: string[], properties?: Record<string, unknown>): JiraIssue => ({
  key,
  fields: { summary, description: '', labels, project: { key: 'NOC' }, issuetype: { name: 'Task' }, status: { name: 'To Do', statusCategory: { key: 'new' } } },
  comments: [],
  ...(properties ? { properties } : {}),
});
const jira = (url: string) => ({
  name: 'jira',
  type: 'jira' as const,
  base_url: url,
  project: 'NOC',
  username: 'bot@example.com',
  api_token: 'api-token',
  fields: { labels: '{{ labels.team }}' },
});

test("a template cannot give an issue onceonly's labels: a rendered onceonly-… label is dropped", async () => {
  const fake = keep(await startJiraFake({ searchLagMs: 0 }));
  const h = keep(deliveryHarness({ adapters: [jira(fake.url)] }));
  await h.incidents.decideIncident({ ...fault, element_id: 'bait', labels: { team: `net ${globexLabel} onceonly` } }, 'acme');
  await h.drain();
  const [made] = [...fake.issues.values()];
  assert.ok(made);
  assert.ok(made.fields.labels.includes('net'), 'the team label is kept');
  assert.ok(!made.fields.labels.includes(globexLabel), "globex's label is not on acme's issue");
  assert.equal(made.fields.labels.filter((l) => /^onceonly/.test(l)).length, 2, "onceonly's own two labels, for acme's key");
  assert.deepEqual(made.properties?.[JIRA_MARK], { tenant: 'acme', kind: 'incident', key: incidentKey({ ...fault, element_id: 'bait' }) });
});

test("a bait issue carrying another key's label is never adopted: the create makes its own, and closes only its own", async () => {
  const fake = keep(await startJiraFake({ searchLagMs: 0 }));
  // Made in Jira by someone else: globex's label, no mark, or a mark for another tenant.
  fake.put(openIssue('NOC-900', 'bait', [globexLabel]));
  fake.put(openIssue('NOC-901', 'bait 2', [globexLabel], { [JIRA_MARK]: { tenant: 'acme', kind: 'incident', key: globexKey } }));
  fake.catchUp();
  const h = keep(deliveryHarness({ adapters: [jira(fake.url)] }));
  await h.incidents.decideIncident(fault, 'globex');
  await h.drain();
  await h.incidents.decideIncident({ ...fault, severity: 'CRITICAL' }, 'globex');
  await h.drain();
  await h.incidents.closeIncident(globexKey, 'globex');
  await h.drain();
  const bait = [fake.issues.get('NOC-900')!, fake.issues.get('NOC-901')!];
  for (const b of bait) {
    assert.deepEqual(b.comments, [], `${b.key} was never written to`);
    assert.equal(b.fields.status.statusCategory.key, 'new', `${b.key} was not closed by globex's close`);
  }
  const own = [...fake.issues.values()].filter((i) => !['NOC-900', 'NOC-901'].includes(i.key));
  assert.equal(own.length, 1, 'globex has an issue of its own');
  assert.deepEqual(own[0]!.properties?.[JIRA_MARK], { tenant: 'globex', kind: 'incident', key: globexKey });
  assert.equal(own[0]!.comments.length, 1, 'its update');
  assert.equal(own[0]!.fields.status.statusCategory.key, 'done', 'its close');
});

test('search still adopts an issue onceonly made for exactly this key, when nothing was recorded', async () => {
  const fake = keep(await startJiraFake({ searchLagMs: 0 }));
  fake.put(openIssue('NOC-42', 'made earlier', ['onceonly', globexLabel], { [JIRA_MARK]: { tenant: 'globex', kind: 'incident', key: globexKey } }));
  fake.catchUp();
  const h = keep(deliveryHarness({ adapters: [jira(fake.url)] }));
  await h.incidents.decideIncident(fault, 'globex');
  await h.drain();
  assert.equal(fake.issues.size, 1, 'no second issue');
  assert.equal(fake.issues.get('NOC-42')!.comments.length, 1, 'the create went onto the marked issue');
});
