import { afterEach, test } from 'node:test';
import assert from 'node:assert/strict';
import { configSchema } from '../../src/config/schema.js';
import { deliveryHarness, oltIncident as incident } from '../helpers/delivery.js';
import { startSlackWebApiFake } from '../fakes/slack-fake.js';

const TOKEN = 'xoxb-1111-2222-fakeBotTokenOfTheTest';
const CHANNELS = { C0ALERTS1: 'alerts' };

const open: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((x) => x.close()));
});
async function setUp(adapter: Record<string, unknown> = {}, fake: { perWindow?: number; token?: string } = {}) {
  const slack = await startSlackWebApiFake({ token: fake.token ?? TOKEN, channels: CHANNELS, ...(fake.perWindow ? { perWindow: fake.perWindow } : {}) });
  const h = deliveryHarness({
    adapters: [{ name: 'chat', type: 'slack', token: TOKEN, channel: '#alerts', api_url: slack.apiUrl, ...adapter }],
    delivery: { base_delay_ms: 100 },
  });
  open.push(slack, h);
  return { slack, h };
}

test('one message per key: posted on create, edited in place on update and close, nothing for a repeat', async () => {
  const { slack, h } = await setUp();
  const created = await h.incidents.decideIncident(incident());
  await h.incidents.decideIncident(incident());
  await h.drain();
  assert.equal(slack.messages.length, 1);
  const [m] = slack.messages;
  assert.equal(m!.channel, 'C0ALERTS1', 'posted by channel name, kept by the id Slack answered');
  assert.match(m!.text, /^:rotating_light: \*create\* incident `dedup:[0-9a-f]{32}` \(MAJOR\): OLT 7 lost signal$/);

  await h.incidents.decideIncident(incident({ severity: 'CRITICAL' }));
  await h.drain();
  assert.equal(slack.messages.length, 1, 'an update edits the message');
  assert.match(m!.text, /^:arrows_counterclockwise: \*update\* .*\(CRITICAL\)/);
  await h.incidents.closeKey('default', created.dedup_key);
  await h.drain();
  assert.equal(slack.messages.length, 1);
  assert.equal(m!.edits, 2);
  assert.match(m!.text, /^:white_check_mark: \*close\* /);
  assert.deepEqual(
    slack.requests.map((r) => r.path),
    ['/api/chat.postMessage', '/api/chat.update', '/api/chat.update'],
  );
  // Every call carries the bot token as Slack wants it, and JSON.
  assert.ok(slack.requests.every((r) => r.headers.authorization === `Bearer ${TOKEN}` && String(r.headers['content-type']).startsWith('application/json')));
});

test('thread_replies: each change after the first is also a reply under the message', async () => {
  const { slack, h } = await setUp({ thread_replies: true });
  const created = await h.incidents.decideIncident(incident());
  await h.drain();
  await h.incidents.decideIncident(incident({ severity: 'CRITICAL' }));
  await h.drain();
  await h.incidents.closeKey('default', created.dedup_key);
  await h.drain();
  const [parent, ...replies] = slack.messages;
  assert.equal(parent!.thread_ts, undefined);
  assert.equal(parent!.edits, 2);
  assert.deepEqual(
    replies.map((r) => [r.thread_ts, r.text.split(' ')[1]]),
    [
      [parent!.ts, '*update*'],
      [parent!.ts, '*close*'],
    ],
  );
});

test("Slack's rate limit (429, Retry-After) holds the edit until then; the message is still one", async () => {
  const { slack, h } = await setUp({}, { perWindow: 1 });
  await h.incidents.decideIncident(incident());
  await h.drain();
  await h.incidents.decideIncident(incident({ severity: 'CRITICAL' }));
  await h.drain();
  const throttled = h.settled.find((x) => x.outcome === 'retried');
  assert.equal(throttled?.reason, 'http_429');
  assert.ok(throttled!.delayMs! >= 1000, `waits the Retry-After (${throttled!.delayMs} ms), not the 100 ms backoff`);
  await new Promise((r) => setTimeout(r, 1100));
  h.clock.advance(throttled!.delayMs!);
  await h.drain();
  assert.equal(slack.messages.length, 1);
  assert.equal(slack.messages[0]!.edits, 1);
  assert.match(slack.messages[0]!.text, /\(CRITICAL\)/);
});

test('a message deleted in Slack is posted again and recorded; the next change edits the new one', async () => {
  const { slack, h } = await setUp();
  await h.incidents.decideIncident(incident());
  await h.drain();
  slack.messages.splice(0);
  await h.incidents.decideIncident(incident({ severity: 'CRITICAL' }));
  await h.drain();
  assert.equal(slack.messages.length, 1, 'posted again');
  await h.incidents.decideIncident(incident({ severity: 'MINOR' }));
  await h.drain();
  assert.equal(slack.messages.length, 1);
  assert.equal(slack.messages[0]!.edits, 1, 'the new message is the one edited');
  assert.deepEqual(
    slack.requests.map((r) => `${r.path.slice(5)}:${(r.body.ts ?? '') === '' ? '' : r.body.ts === slack.messages[0]!.ts ? 'new' : 'old'}`),
    ['chat.postMessage:', 'chat.update:old', 'chat.postMessage:', 'chat.update:new'],
  );
});

test('a wrong token or channel is a dead letter naming Slack’s error, and the token is in none of it', async () => {
  for (const [adapter, fake, error] of [
    [{}, { token: 'xoxb-another-workspace-token' }, 'invalid_auth'],
    [{ channel: '#nowhere' }, {}, 'channel_not_found'],
  ] as const) {
    const { slack, h } = await setUp(adapter, fake);
    await h.incidents.decideIncident(incident());
    await h.drain();
    assert.deepEqual(
      h.settled.map((x) => [x.outcome, x.reason]),
      [['dead', `slack_${error}`]],
    );
    assert.equal(h.settled[0]!.error, `Slack chat.postMessage: ${error}`);
    const dead = await h.store.deliveries.deadLetters(null, 10);
    assert.equal(dead.length, 1);
    assert.ok(!JSON.stringify(dead).includes(TOKEN), 'the bot token is not in the dead letter');
    assert.equal(slack.messages.length, 0);
  }
});

test('the config takes a webhook url, or a token and a channel, and says what is wrong otherwise', () => {
  const parse = (a: Record<string, unknown>) => configSchema.safeParse({ adapters: [{ name: 'chat', type: 'slack', ...a }] });
  assert.ok(parse({ url: 'https://hooks.slack.com/services/T/B/X' }).success);
  assert.ok(parse({ token: TOKEN, channel: 'C0ALERTS1' }).success);
  const refused: Array<[Record<string, unknown>, RegExp]> = [
    [{}, /either url .* or token and channel/],
    [{ url: 'https://hooks.slack.com/services/T/B/X', token: TOKEN, channel: '#a' }, /not both/],
    [{ token: TOKEN }, /needs a channel/],
    [{ url: 'https://hooks.slack.com/services/T/B/X', channel: '#a' }, /channel goes with token/],
    [{ token: 'not a slack token', channel: '#a' }, /must be a Slack bot token/],
    [{ token: TOKEN, channel: '#two words' }, /must be a channel id/],
  ];
  for (const [a, message] of refused) {
    const r = parse(a);
    assert.equal(r.success, false, JSON.stringify(a));
    const text = JSON.stringify(r.error!.issues);
    assert.match(text, message);
    assert.ok(!text.includes('not a slack token'), 'a refused token is not repeated');
  }
});
