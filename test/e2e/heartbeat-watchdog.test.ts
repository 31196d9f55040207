// needs: alertmanager redis
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startSink } from '../fakes/http-fake.js';
import { postAlerts, startAlertmanagerCluster, type AlertmanagerPeer } from '../helpers/alertmanager.js';
import { spawnServer } from '../helpers/process.js';
import { tempDir } from '../helpers/tmp.js';
import { until } from '../helpers/wait.js';
import { heartbeatIncidentKey } from '../../src/heartbeats/heartbeats.js';

// Prometheus's Watchdog is an alert that always fires; Alertmanager re-sends
// it every repeat_interval. Pointed at onceonly it is a heartbeat: while a real
// Alertmanager (Debian's prometheus-alertmanager) keeps sending it the
// heartbeat reads ok and nothing opens; once that Alertmanager stops, the
// heartbeat is missed and one HEARTBEAT_MISSED incident goes to the adapter.
// About 25 s, on the real clock.
test("a real Alertmanager's Watchdog keeps a heartbeat ok; stopping that Alertmanager opens its incident", async () => {
  const hook = await startSink(200, {});
  const dir = tempDir();
  const config = join(dir.path, 'c.yaml');
  writeFileSync(
    config,
    `heartbeats: [ { name: alertmanager-watchdog, interval_seconds: 3, grace_seconds: 3, alertname: Watchdog, severity: CRITICAL } ]
adapters: [ { name: hook, type: webhook, url: "${hook.url}/in" } ]
`,
  );
  const s = await spawnServer(['--port', '0', '--store', `sqlite:${join(dir.path, 'o.db')}`, '--config', config]);
  let peers: AlertmanagerPeer[] = [];
  const heartbeat = async () =>
    ((await (await fetch(`${s.url}/v1/heartbeats`)).json()) as Array<{ name: string; state: string; last_ping_at: string | null }>)[0]!;
  const KEY = heartbeatIncidentKey('alertmanager-watchdog');
  try {
    peers = await startAlertmanagerCluster(dir.path, `${s.url}/v1/alertmanager`, 1, { group_wait: '0s', group_interval: '1s', repeat_interval: '1s' });
    await postAlerts(peers[0]!, [
      {
        labels: { alertname: 'Watchdog', severity: 'none' },
        annotations: { summary: 'the alerting pipeline is alive' },
        startsAt: new Date().toISOString(),
        endsAt: new Date(Date.now() + 3_600_000).toISOString(),
      },
    ]);
    await until(
      async () => (await heartbeat()).state === 'ok' || null,
      15_000,
      () => 'the Watchdog never pinged',
    );
    // Alertmanager's start-up may outlast the 6 s a never-pinged heartbeat is given: then it was
    // missed, rightly, and the first Watchdog closed it. What counts is what follows.
    const early = () => hook.requests.map((r) => `${r.body.key === KEY ? 'heartbeat' : r.body.key}:${r.body.action}`);
    if (early().length > 0)
      await until(
        () => early().length >= 2 || null,
        10_000,
        () => early().join(),
      );
    assert.ok(early().length === 0 || early().join() === 'heartbeat:create,heartbeat:close', early().join());
    hook.requests.length = 0;
    // Twice the heartbeat's interval and grace: it must stay ok all along.
    const pings = new Set<string>();
    for (const end = Date.now() + 12_000; Date.now() < end; ) {
      const h = await heartbeat();
      assert.equal(h.state, 'ok', `missed while Alertmanager was sending (last ping ${h.last_ping_at})`);
      pings.add(h.last_ping_at!);
      await new Promise((r) => setTimeout(r, 500));
    }
    assert.ok(pings.size >= 4, `the Watchdog re-sent as a ping (${pings.size} distinct last pings seen)`);
    assert.equal(hook.requests.length, 0, 'the Watchdog opened no incident of its own, and nothing was missed');

    await peers[0]!.stop();
    await until(
      async () => (await heartbeat()).state === 'missed' || null,
      15_000,
      () => 'the heartbeat was not missed',
    );
    await until(
      () => hook.requests.some((r) => r.body.key === KEY && r.body.action === 'create') || null,
      10_000,
      () => 'no incident delivered',
    );
    const created = hook.requests.filter((r) => r.body.action === 'create');
    assert.equal(created.length, 1, 'one incident, and only the heartbeat one');
    assert.deepEqual(
      [created[0]!.body.data.element_id, created[0]!.body.data.fault_class, created[0]!.body.severity],
      ['alertmanager-watchdog', 'HEARTBEAT_MISSED', 'CRITICAL'],
    );
    const incidents = (await (await fetch(`${s.url}/v1/incidents`)).json()) as { incidents?: Array<{ dedup_key: string }> } | Array<{ dedup_key: string }>;
    const keys = (Array.isArray(incidents) ? incidents : (incidents.incidents ?? [])).map((i) => i.dedup_key);
    assert.deepEqual(keys, [KEY], 'no am: incident for the Watchdog itself');
  } finally {
    await Promise.all(peers.map((p) => p.stop()));
    await s.stop();
    await hook.close();
    dir.remove();
  }
});
