// needs: alertmanager redis
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startSink } from '../fakes/http-fake.js';
import { diskFullAlert, notificationsSent, postAlerts, startAlertmanagerCluster, type AlertmanagerPeer } from '../helpers/alertmanager.js';
import { spawnServer } from '../helpers/process.js';
import { tempDir } from '../helpers/tmp.js';
import { until } from '../helpers/wait.js';
import { caughtUp } from '../helpers/settle.js';

// Two real, clustered Alertmanagers (Debian's prometheus-alertmanager 0.25)
// both receive the same alert and then its resolution, as from Prometheus. HA
// peers notify more than once and out of order (a peer's stale `firing` can
// follow the resolution); onceonly in front of the ticketing must turn the
// whole episode into one create and one close. About 40 s, by design.
test('two clustered Alertmanagers, one alert fired and resolved → exactly one create and one close at the adapter', async () => {
  const hook = await startSink(200, {});
  const dir = tempDir();
  const config = join(dir.path, 'c.yaml');
  writeFileSync(config, `adapters: [ { name: hook, type: webhook, url: "${hook.url}/in" } ]\n`);
  const s = await spawnServer(['--port', '0', '--store', `sqlite:${join(dir.path, 'o.db')}`, '--config', config]);
  let peers: AlertmanagerPeer[] = [];
  try {
    peers = await startAlertmanagerCluster(dir.path, `${s.url}/v1/alertmanager`);
    const startsAt = new Date(Date.now() - 1000).toISOString();
    const alert = diskFullAlert(startsAt);
    await Promise.all(peers.map((p) => postAlerts(p, [alert(new Date(Date.now() + 3_600_000).toISOString())])));
    await until(
      () => hook.requests.some((r) => r.body.action === 'create'),
      30_000,
      () => 'no create delivered',
    );

    await Promise.all(peers.map((p) => postAlerts(p, [alert(new Date().toISOString())])));
    await until(
      () => hook.requests.some((r) => r.body.action === 'close'),
      30_000,
      () => 'no close delivered',
    );
    // HA peers keep notifying after the first resolution (their own copies, a stale firing): wait them
    // out, until neither the peers' sent counters nor the receiver have moved for 5 s.
    let seen = '';
    let stillSince = Date.now();
    await until(
      async () => {
        const now = `${(await Promise.all(peers.map(notificationsSent))).join('+')}/${hook.requests.length}`;
        if (now !== seen) [seen, stillSince] = [now, Date.now()];
        return Date.now() - stillSince >= 5000;
      },
      60_000,
      () => `the peers kept notifying: ${seen}`,
    );

    const sent = await Promise.all(peers.map(notificationsSent));
    const actions = hook.requests.map((r) => r.body.action);
    console.log(`alertmanager webhook posts per peer: ${sent.join(' + ')}; delivered by onceonly: ${actions.join(', ')}`);
    assert.ok(sent.reduce((a, b) => a + b, 0) >= 2, `the peers posted the firing and the resolution (${sent.join(' + ')})`);
    assert.deepEqual(actions, ['create', 'close'], 'one ticket opened, one closed');

    // However many copies the peers happened to send this run, the late peer's
    // stale firing is also replayed here by hand: it must not reopen the ticket.
    const fp = hook.requests[0]!.body.data.fingerprint as string;
    const late = await fetch(`${s.url}/v1/alertmanager`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        version: '4',
        status: 'firing',
        receiver: 'onceonly',
        groupKey: '{}:{alertname="DiskFull"}',
        externalURL: 'http://am-2:9093',
        alerts: [{ ...alert('0001-01-01T00:00:00Z'), status: 'firing', fingerprint: fp }],
      }),
    });
    assert.equal(late.status, 200);
    assert.deepEqual(((await late.json()) as { alerts: unknown[] }).alerts, [{ fingerprint: fp, status: 'firing', outcome: 'stale', muted: null }]);
    await caughtUp(s);
    assert.deepEqual(
      hook.requests.map((r) => r.body.action),
      ['create', 'close'],
      'still one ticket',
    );
    assert.equal(hook.requests[0]!.body.key, hook.requests[1]!.body.key);
    assert.match(hook.requests[0]!.body.key, /^am:[0-9a-f]+$/);
    assert.equal(hook.requests[0]!.body.severity, 'CRITICAL');
    assert.equal(hook.requests[0]!.body.summary, 'db1: disk 97% full');
  } finally {
    await Promise.all(peers.map((p) => p.stop()));
    await s.stop();
    await hook.close();
    dir.remove();
  }
});
