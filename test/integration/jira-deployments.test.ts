// needs: redis
import { join } from 'node:path';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { jiraDeployment } from '../../src/delivery/adapters/jira.js';
import { FailOpenStore } from '../../src/store/failopen/fail-open-store.js';
import { Journal } from '../../src/store/failopen/journal.js';
import { MemoryStore } from '../../src/store/memory/memory-store.js';
import { redisConnection } from '../../src/store/redis/connection.js';
import { RedisStore } from '../../src/store/redis/redis-store.js';
import { startJiraFake } from '../fakes/jira-fake.js';
import { deliveryHarness } from '../helpers/delivery.js';
import { freePort } from '../helpers/redis.js';
import { tempDir } from '../helpers/tmp.js';
import { closedAfterEach } from '../helpers/keep.js';

/**
 * The Jira adapter against a fake that behaves as Jira does where it matters:
 * Cloud's search is at /rest/api/3/search/jql (the v2 one answers 410) and its
 * index lags behind writes; the workflow offers only the transitions a status
 * has. The issue a key made is kept in onceonly's store, so nothing that
 * follows a create depends on the search having caught up.
 */

const keep = closedAfterEach();

const incident = (over: Record<string, unknown> = {}) => ({ element_id: 'olt-7', fault_class: 'LOS', root_cause_id: 'cut-1', severity: 'MAJOR', ...over });
const jiraAt = (url: string, over: Record<string, unknown> = {}) => ({
  name: 'jira',
  type: 'jira' as const,
  base_url: url,
  project: 'NOC',
  username: 'bot@example.com',
  api_token: 'api-token',
  ...over,
});
const open_ = (issues: Iterable<{ fields: { status: { statusCategory: { key: string } } } }>) =>
  [...issues].filter((i) => i.fields.status.statusCategory.key !== 'done');

test('the deployment follows the config, and without one the host: atlassian.net is Cloud', () => {
  assert.equal(jiraDeployment({ base_url: 'https://acme.atlassian.net' }), 'cloud');
  assert.equal(jiraDeployment({ base_url: 'https://ACME.Atlassian.net/' }), 'cloud');
  assert.equal(jiraDeployment({ base_url: 'https://jira.corp.example' }), 'datacenter');
  assert.equal(jiraDeployment({ base_url: 'https://atlassian.net.evil.example' }), 'datacenter');
  assert.equal(jiraDeployment({ base_url: 'https://jira.corp.example', deployment: 'cloud' }), 'cloud');
  assert.equal(jiraDeployment({ base_url: 'https://acme.atlassian.net', deployment: 'datacenter' }), 'datacenter');
});

for (const deployment of ['cloud', 'datacenter'] as const) {
  test(`${deployment}: create, update and close land on one issue while the search index has not caught up`, async () => {
    // The index stays a minute behind: nothing the test does is ever searchable.
    const jira = keep(await startJiraFake({ deployment, searchLagMs: 60_000 }));
    const h = keep(deliveryHarness({ adapters: [jiraAt(jira.url, { deployment })] }));
    const { dedup_key: key } = await h.incidents.decideIncident(incident());
    await h.drain();
    await h.incidents.decideIncident(incident({ severity: 'CRITICAL' }));
    await h.drain();
    await h.incidents.closeIncident(key);
    await h.drain();
    assert.deepEqual(
      h.settled.map((s) => [s.action, s.outcome, s.error ?? '']),
      [
        ['create', 'delivered', ''],
        ['update', 'delivered', ''],
        ['close', 'delivered', ''],
      ],
    );
    assert.equal(jira.issues.size, 1, 'one issue, not one per change');
    const [issue] = [...jira.issues.values()];
    assert.equal(issue!.fields.status.name, 'Done');
    assert.equal(issue!.comments.length, 1, 'the update is a comment on it');
    const searched = jira.requests.filter((r) => r.path.includes('/search')).map((r) => r.path);
    assert.deepEqual([...new Set(searched)], [deployment === 'cloud' ? '/rest/api/3/search/jql' : '/rest/api/2/search']);
    assert.equal(searched.length, 1, 'only the first lookup searched');
    // A re-create after the close reopens the same issue, read by its key.
    await h.incidents.decideIncident(incident());
    await h.drain();
    assert.equal(jira.issues.size, 1);
    assert.equal(issue!.fields.status.name, 'To Do', 'reopened');
  });
}

// Planted fault it catches: the create's fields without `issuetype` (the fake refused it as Jira does: a dead letter).
test('a create carries the project, the configured issue type and a summary, which Jira requires', async () => {
  const jira = keep(await startJiraFake({ searchLagMs: 0 }));
  const h = keep(deliveryHarness({ adapters: [jiraAt(jira.url, { issue_type: 'Bug' })] }));
  await h.incidents.decideIncident(incident({ element_id: 'olt-issuetype' }));
  await h.drain();
  assert.deepEqual(
    h.settled.map((x) => [x.action, x.outcome, x.error ?? '']),
    [['create', 'delivered', '']],
  );
  const [issue] = [...jira.issues.values()];
  assert.deepEqual([issue!.fields.project.key, issue!.fields.issuetype.name], ['NOC', 'Bug']);
  assert.ok(issue!.fields.summary.length > 0);
  // The fake refuses what Jira refuses: the same call without an issue type.
  const bare = await fetch(`${jira.url}/rest/api/2/issue`, {
    method: 'POST',
    headers: { authorization: `Basic ${Buffer.from('bot@example.com:api-token').toString('base64')}`, 'content-type': 'application/json' },
    body: JSON.stringify({ fields: { project: { key: 'NOC' }, summary: 's' } }),
  });
  assert.deepEqual([bare.status, await bare.json()], [400, { errorMessages: [], errors: { issuetype: 'Specify an issue type' } }]);
});

test('cloud: an issue made before onceonly kept ids is found by the v3 search once indexed, and kept from then on', async () => {
  const jira = keep(await startJiraFake({ deployment: 'cloud', searchLagMs: 0 }));
  const h = keep(deliveryHarness({ adapters: [jiraAt(jira.url, { deployment: 'cloud' })] }));
  const { dedup_key: key } = await h.incidents.decideIncident(incident());
  await h.drain();
  const [issue] = [...jira.issues.values()];
  // Forget what the store kept: the next change must find the issue by its label.
  await h.store.tickets.forget({ adapter: 'jira', tenant: 'default', kind: 'incident', key }, issue!.key);
  await h.incidents.decideIncident(incident({ severity: 'CRITICAL' }));
  await h.drain();
  assert.equal(jira.issues.size, 1);
  assert.equal(issue!.comments.length, 1);
  assert.equal(await h.store.tickets.find({ adapter: 'jira', tenant: 'default', kind: 'incident', key }, 1000), issue!.key, 'recorded again');
  assert.ok(
    jira.requests.every((r) => r.path !== '/rest/api/2/search'),
    'never the removed v2 search',
  );
});

test('an issue deleted in Jira is forgotten: the next create makes a new one', async () => {
  const jira = keep(await startJiraFake({ searchLagMs: 0 }));
  const h = keep(deliveryHarness({ adapters: [jiraAt(jira.url)] }));
  const { dedup_key: key } = await h.incidents.decideIncident(incident());
  await h.drain();
  const [first] = [...jira.issues.keys()];
  jira.issues.clear();
  await h.incidents.closeIncident(key);
  await h.drain();
  assert.equal(h.settled.at(-1)!.outcome, 'delivered', 'nothing to close');
  await h.incidents.decideIncident(incident());
  await h.drain();
  assert.equal(jira.issues.size, 1);
  const [second] = [...jira.issues.keys()];
  assert.notEqual(second, first);
  assert.equal(await h.store.tickets.find({ adapter: 'jira', tenant: 'default', kind: 'incident', key }, 1000), second);
});

test('the workflow: a close from In Progress, and a transition the status does not offer fails naming what it offers', async () => {
  const jira = keep(await startJiraFake({ searchLagMs: 0 }));
  const h = keep(deliveryHarness({ adapters: [jiraAt(jira.url)], delivery: { max_retries: 0 } }));
  const { dedup_key: key } = await h.incidents.decideIncident(incident());
  await h.drain();
  const [issue] = [...jira.issues.values()];
  // Someone started work on it in Jira.
  const start = await fetch(`${jira.url}/rest/api/2/issue/${issue!.key}/transitions`, {
    method: 'POST',
    headers: { authorization: `Basic ${Buffer.from('bot@example.com:api-token').toString('base64')}`, 'content-type': 'application/json' },
    body: JSON.stringify({ transition: { id: '11' } }),
  });
  assert.equal(start.status, 204);
  assert.equal(issue!.fields.status.name, 'In Progress');
  await h.incidents.closeIncident(key);
  await h.drain();
  assert.equal(issue!.fields.status.name, 'Done', 'Done is offered from In Progress');

  // A config whose reopen transition this workflow does not have.
  h.reconfigure({ adapters: [jiraAt(jira.url, { reopen_transition: 'Back to triage' })], delivery: { max_retries: 0 } });
  await h.incidents.decideIncident(incident());
  await h.drain();
  const last = h.settled.at(-1)!;
  assert.equal(last.outcome, 'dead');
  assert.match(last.error ?? '', /no transition named "Back to triage" from its status \(has: Reopen\)/);
  assert.equal(issue!.fields.status.name, 'Done', 'left as it was');
});

test('two replicas each delivering a create of the same key at once end with one open issue: the store picks the winner', async () => {
  // Each replica decided a provisional CREATE while failing open; both deliver
  // once they can. The search index lags, so neither can see the other's issue.
  const jira = keep(await startJiraFake({ deployment: 'cloud', searchLagMs: 60_000 }));
  const config = { adapters: [jiraAt(jira.url, { deployment: 'cloud' })] };
  const a = keep(deliveryHarness(config));
  const b = keep(deliveryHarness(config, 0, undefined, (c) => Object.assign(new MemoryStore(c), { tickets: a.store.tickets })));
  await a.incidents.decideIncident(incident());
  await b.incidents.decideIncident(incident());
  await Promise.all([a.drain(), b.drain()]);
  assert.equal(jira.issues.size, 2, 'both created before either could know');
  assert.equal(open_(jira.issues.values()).length, 1, 'one stays open');
  const dup = [...jira.issues.values()].find((i) => i.fields.status.name === 'Done')!;
  const kept = [...jira.issues.values()].find((i) => i !== dup)!;
  assert.match(dup.comments[0] ?? '', new RegExp(`Duplicate of ${kept.key}`));
  assert.equal(kept.comments.length, 1, 'the loser’s create went onto the winner as a comment');
  const details = [...a.settled, ...b.settled].map((s) => s.outcome);
  assert.deepEqual(details, ['delivered', 'delivered']);
});

test('with the store unreachable, replicas failing open fall back to search: on Data Center they converge on the oldest issue', async () => {
  const jira = keep(await startJiraFake({ deployment: 'datacenter', searchLagMs: 0 }));
  const dead = `redis://127.0.0.1:${await freePort()}`;
  const dir = tempDir();
  keep({ close: dir.remove });
  const config = { adapters: [jiraAt(jira.url)] };
  const failingOpen = (name: string) => (c: Parameters<Parameters<typeof deliveryHarness>[3] & object>[0]) =>
    new FailOpenStore(new RedisStore(redisConnection(dead)), new Journal(join(dir.path, `${name}.db`), c), c, { timeoutMs: 50 });
  const a = keep(deliveryHarness(config, 0, undefined, failingOpen('a')));
  const b = keep(deliveryHarness(config, 0, undefined, failingOpen('b')));
  const [da, db] = [await a.incidents.decideIncident(incident()), await b.incidents.decideIncident(incident())];
  assert.deepEqual([da.decision, da.provisional, db.decision, db.provisional], ['CREATE', true, 'CREATE', true], 'each replica decided alone');
  await Promise.all([a.drain(), b.drain()]);
  assert.deepEqual(
    [...a.settled, ...b.settled].map((s) => s.outcome),
    ['delivered', 'delivered'],
  );
  assert.equal(open_(jira.issues.values()).length, 1, 'one open issue, whichever way the two interleaved');
  assert.ok(
    jira.requests.some((r) => r.path === '/rest/api/2/search'),
    'found by search, the store being away',
  );
});
