import { test } from 'node:test';
import assert from 'node:assert/strict';
import { slackText } from '../../src/delivery/adapters/slack.js';

test('Slack text escapes what Slack would act on: no channel ping, mention or hidden link from a summary', () => {
  const text = slackText({
    tenant: 'acme',
    kind: 'incident',
    action: 'create',
    key: 'pd:<k>',
    severity: 'CRITICAL',
    summary: '<!channel> disk full & <https://evil.example|click here> <@U123>',
    data: {},
    at: 0,
  });
  assert.ok(!/<[!@h]/.test(text), text);
  assert.match(text, /&lt;!channel&gt; disk full &amp; &lt;https:\/\/evil\.example\|click here&gt; &lt;@U123&gt;/);
  assert.match(text, /`pd:&lt;k&gt;`/);
});
