import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startJiraFake } from '../fakes/jira-fake.js';
import { deliveryHarness } from '../helpers/delivery.js';
import { closedAfterEach } from '../helpers/keep.js';

/**
 * What Jira refuses in a create or a comment, and the adapter keeping inside
 * it: a summary is one line of at most 255 characters, a text field or a
 * comment at most 32,767, and a create sets only fields its screen has.
 */

const keep = closedAfterEach();

const AUTH = `Basic ${Buffer.from('bot@example.com:api-token').toString('base64')}`;
const base = { project: { key: 'NOC' }, issuetype: { name: 'Incident' }, summary: 'link down', description: 'd', labels: ['onceonly'] };

test('the fake refuses as Jira does, naming each field: a summary of two lines or 256 characters, a long text, a field off the screen', async () => {
  const jira = keep(await startJiraFake());
  const create = async (fields: Record<string, unknown>) => {
    const res = await fetch(`${jira.url}/rest/api/2/issue`, {
      method: 'POST',
      headers: { authorization: AUTH, 'content-type': 'application/json' },
      body: JSON.stringify({ fields }),
    });
    return { status: res.status, body: (await res.json()) as { errors?: Record<string, string>; key?: string } };
  };
  const refused: Array<[Record<string, unknown>, string, RegExp]> = [
    [{ ...base, summary: 'link down\nolt-7' }, 'summary', /newline characters/],
    [{ ...base, summary: 'x'.repeat(256) }, 'summary', /less than 255 characters/],
    [{ ...base, description: 'x'.repeat(32_768) }, 'description', /exceeds the allowed limit of 32,767 characters/],
    [
      { ...base, customfield_10042: 'EU' },
      'customfield_10042',
      /^Field 'customfield_10042' cannot be set\. It is not on the appropriate screen, or unknown\.$/,
    ],
    [{ ...base, issuetype: undefined }, 'issuetype', /Specify an issue type/],
  ];
  for (const [fields, field, message] of refused) {
    const r = await create(fields);
    assert.equal(r.status, 400, field);
    assert.match(r.body.errors?.[field] ?? '', message);
  }
  assert.equal(jira.issues.size, 0, 'nothing refused was made');
  const ok = await create({ ...base, summary: 'x'.repeat(255), description: 'x'.repeat(32_767), priority: { name: 'High' } });
  assert.equal(ok.status, 201, 'at the limits, and with a field the screen has, the create is taken');
  const comment = await fetch(`${jira.url}/rest/api/2/issue/${ok.body.key}/comment`, {
    method: 'POST',
    headers: { authorization: AUTH, 'content-type': 'application/json' },
    body: JSON.stringify({ body: 'x'.repeat(32_768) }),
  });
  assert.equal(comment.status, 400);
  assert.match(JSON.stringify(await comment.json()), /exceeds the allowed limit/);
});

// Planted fault it catches: the summary sent as given (several lines, or cut inside a surrogate pair).
test('the adapter sends a summary of many lines as one, cut to 255 without splitting a character, and cuts long texts saying so', async () => {
  const jira = keep(await startJiraFake({ searchLagMs: 0 }));
  const h = keep(
    deliveryHarness({
      adapters: [{ name: 'jira', type: 'jira', base_url: jira.url, project: 'NOC', username: 'bot@example.com', api_token: 'api-token' }],
    }),
  );
  // 254 characters, then a character outside the BMP (two UTF-16 units) across the 255 line, then more.
  const summary = `Link down\r\n\n  on olt-7 ${'x'.repeat(254 - 'Link down on olt-7 '.length)}\u{1F525}${'y'.repeat(40)}`;
  const details = { log: 'z'.repeat(40_000) };
  const incident = { element_id: 'olt-7', fault_class: 'LOS', root_cause_id: 'cut-1', severity: 'MAJOR', summary, details };
  await h.incidents.decideIncident(incident);
  await h.drain();
  assert.deepEqual(
    h.settled.map((s) => `${s.action}:${s.outcome}`),
    ['create:delivered'],
    JSON.stringify(h.settled.map((s) => s.error)),
  );
  const [issue] = [...jira.issues.values()];
  assert.ok(issue);
  assert.equal(issue.fields.summary, `Link down on olt-7 ${'x'.repeat(254 - 'Link down on olt-7 '.length)}`, 'one line, cut before the pair');
  assert.ok(issue.fields.summary.length <= 255);
  assert.ok(issue.fields.description.length <= 32_767);
  assert.match(issue.fields.description, /cut to Jira's limit of 32,767 characters\)$/);
  // An update is a comment: cut the same way.
  await h.incidents.decideIncident({ ...incident, severity: 'CRITICAL' });
  await h.drain();
  assert.equal(h.settled.at(-1)?.outcome, 'delivered', h.settled.at(-1)?.error);
  assert.equal(issue.comments.length, 1);
  assert.ok(issue.comments[0]!.length <= 32_767);
});
