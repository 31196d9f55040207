import { test } from 'node:test';
import assert from 'node:assert/strict';
import { postJson, runCli, spawnServer } from '../helpers/process.js';

test('operator CLI against a running server: stats, incidents list / show / close, and clear errors', async () => {
  const s = await spawnServer(['--port', '0', '--store', 'memory:']);
  try {
    const { body } = await postJson(`${s.url}/v1/incidents`, { element_id: 'olt-7', fault_class: 'LOS', root_cause_id: 'cut', severity: 'MAJOR' });
    const key = body.dedup_key as string;
    await postJson(`${s.url}/v1/incidents`, { element_id: 'olt-7', fault_class: 'LOS', root_cause_id: 'cut', severity: 'MAJOR' });
    const ev = (sequence: number) => ({ tenant_id: 'acme', device_id: 'pos-1', boot_id: 'b', sequence, state: 'IDLE', observed_at: '2026-11-30T12:00:00Z' });
    await postJson(`${s.url}/v1/events`, ev(1));
    await postJson(`${s.url}/v1/events`, ev(1));
    await postJson(`${s.url}/v1/events`, { nope: true });

    const stats = runCli(['stats', '--url', s.url]);
    assert.equal(stats.status, 0, stats.stderr);
    assert.match(stats.stdout, /received\s+3/);
    assert.match(stats.stdout, /applied\s+1/);
    assert.match(stats.stdout, /duplicate\s+1/);
    assert.match(stats.stdout, /rejected\s+1 \(invalid 1\)/);
    assert.match(stats.stdout, /invariant .*: holds/);
    assert.deepEqual(JSON.parse(runCli(['stats', '--url', s.url, '--json']).stdout), {
      received: 3,
      applied: 1,
      duplicate: 1,
      rejected: { invalid: 1 },
      sequence_gaps: 0,
      invariant_holds: true,
    });

    const list = runCli(['incidents', 'list', '--url', s.url]);
    assert.equal(list.status, 0, list.stderr);
    assert.match(list.stdout, /^key\s+severity\s+refires\s+updates/m);
    assert.match(list.stdout, new RegExp(`^${key}\\s+MAJOR\\s+1\\s+0`, 'm'));
    assert.match(list.stdout, /\s+what$/m, 'the last column says what each incident is');
    assert.match(list.stdout, new RegExp(`^${key}\\s.*\\solt-7 · LOS · cut$`, 'm'), list.stdout);
    const show = runCli(['incidents', 'show', key, '--url', s.url]);
    assert.equal(JSON.parse(show.stdout).refires, 1);
    assert.equal(runCli(['incidents', 'close', key, '--url', s.url]).stdout.trim(), `closed ${key}`);
    assert.equal(runCli(['incidents', 'list', '--url', s.url]).stdout.trim(), 'no live incidents');

    const again = runCli(['incidents', 'close', key, '--url', s.url]);
    assert.equal(again.status, 1);
    assert.match(again.stderr, /onceonly incidents close: dedup:[0-9a-f]{32}: HTTP 404: incident .* is not live/);
    const bad = runCli(['incidents', 'show', 'not-a-key', '--url', s.url]);
    assert.equal(bad.status, 1);
    assert.match(bad.stderr, /HTTP 400: invalid dedup_key/);
    const limit = runCli(['incidents', 'list', '--limit', '0', '--url', s.url]);
    assert.equal(limit.status, 1);
    assert.match(limit.stderr, /limit must be a whole number from 1 to 1000/);
    const down = runCli(['stats', '--url', 'http://127.0.0.1:9']);
    assert.equal(down.status, 1);
    assert.match(down.stderr, /no answer from the server/);
  } finally {
    await s.stop();
  }
});

// GET /v1/incidents lists Alertmanager (`am:`) and PagerDuty (`pd:`) keys beside `dedup:` ones; each
// of them can be shown and closed, by HTTP and by the CLI, whatever its dedup_key holds (a `/`, a space,
// non-ASCII). A key no input can make is 400 and changes nothing.
test('every key the list shows can be shown and closed: dedup:, am: and pd: keys, by HTTP and by the CLI', async () => {
  const s = await spawnServer(['--port', '0', '--store', 'memory:']);
  try {
    await postJson(`${s.url}/v1/incidents`, { element_id: 'olt-7', fault_class: 'LOS', root_cause_id: 'cut', severity: 'MAJOR' });
    const am = await postJson(`${s.url}/v1/alertmanager`, {
      version: '4',
      status: 'firing',
      receiver: 'onceonly',
      groupKey: '{}',
      alerts: [
        {
          status: 'firing',
          labels: { severity: 'critical', alertname: 'DiskFull' },
          annotations: {},
          startsAt: '2026-11-30T12:00:00Z',
          fingerprint: 'a1b2c3d4e5f60718',
        },
      ],
    });
    assert.equal(am.status, 200, JSON.stringify(am.body));
    const pd = await postJson(`${s.url}/v2/enqueue`, {
      routing_key: 'R0UT1NG0000000000000000000000000',
      event_action: 'trigger',
      dedup_key: 'disk/full db1 ключ',
      payload: { summary: 'disk full', source: 'db1', severity: 'error' },
    });
    assert.equal(pd.status, 202, JSON.stringify(pd.body));
    // The longest dedup_key PagerDuty allows, far past the router's default 100-character parameter.
    const long = await postJson(`${s.url}/v2/enqueue`, {
      routing_key: 'R0UT1NG0000000000000000000000000',
      event_action: 'trigger',
      dedup_key: 'я'.repeat(255),
      payload: { summary: 'long', source: 'db1', severity: 'error' },
    });
    assert.equal(long.status, 202, JSON.stringify(long.body));
    const listed = async () =>
      ((await (await fetch(`${s.url}/v1/incidents`)).json()) as { incidents: Array<{ dedup_key: string }> }).incidents.map((i) => i.dedup_key);
    const keys = await listed();
    assert.deepEqual(keys.map((k) => k.split(':')[0]).sort(), ['am', 'dedup', 'pd', 'pd']);
    // What each one is: the alert's name (its labels with alertname first), PagerDuty's source, the incident's identity.
    const table = runCli(['incidents', 'list', '--url', s.url]).stdout;
    assert.match(table, /^am:\S+\s.*\sDiskFull$/m, table);
    assert.match(table, /^pd:disk\/full db1 ключ\s.*\sdb1 · disk full$/m, table);
    assert.match(table, /^dedup:\S+\s.*\solt-7 · LOS · cut$/m, table);
    const amKey = keys.find((k) => k.startsWith('am:'))!;
    const amShown = JSON.parse(runCli(['incidents', 'show', amKey, '--url', s.url]).stdout);
    assert.deepEqual(Object.keys(amShown.labels), ['alertname', 'severity'], 'an alert’s labels, alertname first');

    for (const bad of ['pd:', 'am:', `am:${'f'.repeat(129)}`, 'pd:a\u0001b', 'dedup:XYZ']) {
      const r = await fetch(`${s.url}/v1/incidents/${encodeURIComponent(bad)}`, { method: 'DELETE' });
      assert.equal(r.status, 400, `${JSON.stringify(bad)} is no key`);
    }
    assert.deepEqual((await listed()).sort(), [...keys].sort(), 'the refused calls closed nothing');

    for (const key of keys) {
      const shown = runCli(['incidents', 'show', key, '--url', s.url]);
      assert.equal(shown.status, 0, `${key}: ${shown.stderr}`);
      assert.equal(JSON.parse(shown.stdout).dedup_key, key);
      const closed = runCli(['incidents', 'close', key, '--url', s.url]);
      assert.equal(closed.stdout.trim(), `closed ${key}`, closed.stderr);
      assert.equal((await fetch(`${s.url}/v1/incidents/${encodeURIComponent(key)}`)).status, 404, `${key} is closed`);
    }
    assert.deepEqual(await listed(), []);
  } finally {
    await s.stop();
  }
});
