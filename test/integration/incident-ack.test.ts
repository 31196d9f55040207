/**
 * `POST /v1/incidents/{key}/ack` and `onceonly ack KEY`: the first
 * acknowledgement of a live episode sends its adapters one update saying so
 * and is a line in the key's history; a repeat, another tenant's key, a key
 * that is not live or a bad body changes nothing.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startFake } from '../fakes/http-fake.js';
import { postJson, runCli, spawnServer } from '../helpers/process.js';
import { inProcessServer } from '../helpers/server.js';
import { until } from '../helpers/wait.js';

const incident = { element_id: 'olt-9', fault_class: 'LOS', root_cause_id: 'cut', severity: 'MAJOR' };

test('an acknowledgement reaches the adapters once, shows on the key and in its history; a repeat and bad calls change nothing', async () => {
  const receiver = await startFake(() => ({ status: 200, body: {} }));
  const s = await inProcessServer({
    config:
      `adapters: [ { name: hook, type: webhook, url: "${receiver.url}/in" } ]\n` +
      'tenants: [ { id: acme, tokens: [acme-token-0123456789abcdef] }, { id: globex, tokens: [globex-token-0123456789abcdef] } ]\n',
  });
  const call = async (method: 'GET' | 'POST', url: string, token: string, payload?: string) => {
    const headers = { authorization: `Bearer ${token}`, ...(payload !== undefined ? { 'content-type': 'application/json' } : {}) };
    const r = await s.app.inject({ method, url, headers, ...(payload !== undefined ? { payload } : {}) });
    return { status: r.statusCode, body: r.json() as any };
  };
  const acme = 'acme-token-0123456789abcdef';
  const globex = 'globex-token-0123456789abcdef';
  try {
    const created = await call('POST', '/v1/incidents', acme, JSON.stringify(incident));
    const key: string = created.body.dedup_key;
    const ack = (token: string, body?: string, k = key) => call('POST', `/v1/incidents/${encodeURIComponent(k)}/ack`, token, body);
    await until(
      () => receiver.requests.some((r) => r.body?.action === 'create') || null,
      10_000,
      () => 'the create was delivered',
    );

    // Refused, and nothing changes: another tenant's key is not live for it; a body with more than `by`; text that would fool a terminal; not a key.
    const refused = [
      [await ack(globex, '{}'), 404, /not live/],
      [await ack(acme, '{"by":"ann","note":"x"}'), 400, /note/],
      [await ack(acme, JSON.stringify({ by: 'ann\u202e' })), 400, /bidirectional/],
      [await ack(acme, JSON.stringify({ by: '' })), 400, /by/],
      [await ack(acme, '{}', 'not-a-key'), 400, /invalid dedup_key/],
      [await ack(acme, '{}', 'dedup:00000000000000000000000000000000'), 404, /not live/],
    ] as const;
    for (const [r, status, message] of refused) {
      assert.equal(r.status, status, JSON.stringify(r.body));
      assert.match(r.body.error.message, message);
    }
    await new Promise((r) => setTimeout(r, 300));
    assert.ok(!receiver.requests.some((r) => r.body?.key === key && r.body?.action === 'update'), 'no refused call acknowledged it');

    const first = await ack(acme, JSON.stringify({ by: 'ann' }));
    assert.deepEqual([first.status, first.body], [200, { dedup_key: key, outcome: 'acknowledged' }]);
    const again = await ack(acme); // no body at all, as `curl -X POST` sends
    assert.deepEqual([again.status, again.body.outcome], [200, 'repeat']);
    await until(
      () => receiver.requests.some((r) => r.body?.action === 'update') || null,
      10_000,
      () => 'the acknowledgement was delivered',
    );
    await new Promise((r) => setTimeout(r, 300));
    const updates = receiver.requests.filter((r) => r.body?.key === key && r.body?.action === 'update');
    assert.equal(updates.length, 1, 'one update for two acknowledgements');
    assert.equal(updates[0]!.body.data.acknowledged, true);

    const history = await until(
      async () => {
        const h = await call('GET', `/v1/incidents/${key}/history`, acme);
        return h.body.events?.some((e: any) => e.type === 'acknowledged') ? h.body.events : null;
      },
      10_000,
      () => 'the acknowledgement is in the history',
    );
    assert.deepEqual(
      history.filter((e: any) => e.type === 'acknowledged').map((e: any) => [e.via, e.by]),
      [['api', 'ann']],
    );
  } finally {
    await s.stop();
    await receiver.close();
  }
});

test('onceonly ack KEY: acknowledged, then already acknowledged; a key that is not live fails with the server’s reason', async () => {
  // A server of its own process: the CLI runs synchronously here, and would block one in this process.
  const s = await spawnServer(['--port', '0', '--store', 'memory:']);
  try {
    const { body } = await postJson(`${s.url}/v1/incidents`, incident);
    const key: string = body.dedup_key;
    const first = runCli(['ack', key, '--by', 'ann', '--url', s.url]);
    assert.equal(first.stdout.trim(), `acknowledged ${key}`, first.stderr);
    const again = runCli(['incidents', 'ack', key, '--url', s.url]);
    assert.equal(again.stdout.trim(), `already acknowledged ${key}`, again.stderr);
    assert.equal(runCli(['ack', key, '--url', s.url]).stdout.trim(), `already acknowledged ${key}`, 'the server keeps it');
    const gone = runCli(['ack', 'dedup:00000000000000000000000000000000', '--url', s.url]);
    assert.equal(gone.status, 1);
    assert.match(gone.stderr, /onceonly ack: dedup:0{32}: HTTP 404: incident .* is not live/);
  } finally {
    await s.stop();
  }
});
