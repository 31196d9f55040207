import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startSlackWebApiFake } from '../fakes/slack-fake.js';
import { postJson, spawnServer } from '../helpers/process.js';
import { tempDir } from '../helpers/tmp.js';
import { until } from '../helpers/wait.js';

const TOKEN = 'xoxb-3333-4444-fakeBotTokenOfTheKillTest';
const KEYS = 20;

// The message's channel and ts live in the store, not in the replica that posted it: a replica
// killed (SIGKILL) with edits still to make leaves them to the next one, which edits the same
// messages. One message per fault, in its final state, whichever replica made each change.
test('Slack edit in place across a replica kill: one message per key, edited by the replica that took over', async () => {
  const slack = await startSlackWebApiFake({ token: TOKEN, channels: { C0ALERTS1: 'alerts' } });
  const dir = tempDir();
  const config = join(dir.path, 'c.yaml');
  // A short lease: deliveries the killed replica had taken are taken over within 2 s.
  writeFileSync(
    config,
    `delivery: { lease_ms: 2000, base_delay_ms: 100 }\nadapters:\n  - { name: chat, type: slack, token: "${TOKEN}", channel: "#alerts", api_url: "${slack.apiUrl}", timeout_ms: 1500 }\n`,
  );
  const args = ['--port', '0', '--store', `sqlite:${join(dir.path, 'o.db')}`, '--config', config];
  const fault = (i: number, severity: string) => ({
    element_id: `olt-${i}`,
    fault_class: 'LOS',
    root_cause_id: `cut-${i}`,
    severity,
    summary: `OLT ${i} lost signal`,
  });
  const a = await spawnServer(args);
  let b: Awaited<ReturnType<typeof spawnServer>> | undefined;
  try {
    for (let i = 0; i < KEYS; i++) assert.equal((await postJson(`${a.url}/v1/incidents`, fault(i, 'MAJOR'))).body.decision, 'CREATE');
    await until(
      () => slack.messages.length === KEYS,
      30_000,
      () => `${slack.messages.length} of ${KEYS} posted`,
    );
    // Changes for every key, then the replica dies with some of their edits made and some not.
    for (let i = 0; i < KEYS; i++) assert.equal((await postJson(`${a.url}/v1/incidents`, fault(i, 'CRITICAL'))).body.decision, 'UPDATE');
    await until(
      () => slack.messages.some((m) => m.edits > 0),
      30_000,
      () => 'no edit made',
    );
    assert.equal(await a.stop('SIGKILL'), null);
    const editedByA = slack.messages.filter((m) => m.edits > 0).length;

    b = await spawnServer(args);
    const keys = slack.messages.map((m) => /`(dedup:[0-9a-f]{32})`/.exec(m.text)![1]!);
    for (const key of keys) assert.equal((await fetch(`${b.url}/v1/incidents/${encodeURIComponent(key)}`, { method: 'DELETE' })).status, 204);
    await until(
      () => slack.messages.every((m) => m.text.startsWith(':white_check_mark: *close*')),
      60_000,
      () => `${slack.messages.filter((m) => m.text.startsWith(':white_check_mark:')).length} of ${KEYS} closed`,
    );
    assert.ok(editedByA >= 1, 'the first replica had made edits of its own');
    console.log(`edits made before the kill: ${editedByA} of ${KEYS}; messages: ${slack.messages.length}; posts: ${slack.calls('chat.postMessage').length}`);
    assert.equal(slack.messages.length, KEYS, 'one message per key');
    assert.equal(slack.calls('chat.postMessage').length, KEYS, 'each posted once');
    assert.equal(new Set(slack.messages.map((m) => /`(dedup:[0-9a-f]{32})`/.exec(m.text)![1])).size, KEYS, 'each key its own message');
    // Every message went through the update (by either replica) before its close: each shows its key's last change.
    assert.ok(slack.messages.every((m) => m.edits >= 2 && /\(CRITICAL\)/.test(m.text)));
  } finally {
    await a.stop('SIGKILL');
    await b?.stop();
    await slack.close();
    dir.remove();
  }
});
