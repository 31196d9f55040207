// needs: alertmanager
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startSink } from '../fakes/http-fake.js';
import { type AlertmanagerPeer, postAlerts, startAlertmanager } from '../helpers/alertmanager.js';
import { spawnServer } from '../helpers/process.js';
import { tempDir } from '../helpers/tmp.js';
import { until } from '../helpers/wait.js';

// One route's options, the same in a real Alertmanager (Debian's 0.25) and in
// onceonly: the same alerts reach both on one schedule, and each notifies
// its own receiver. onceonly's notifications must be Alertmanager's, one for
// one, each within one group_interval of Alertmanager's, with the same
// firing alerts in each. About 35 s, by design.
const TIMING = { group_wait: '2s', group_interval: '4s', repeat_interval: '11s' };
const INTERVAL_MS = 4000;

/** An alert (of team net unless said) that started when first sent. */
const alert = (name: string, endsAt?: string, team = 'net') => {
  started[name] ??= new Date().toISOString();
  return {
    labels: { alertname: name, team, severity: 'critical' },
    annotations: { summary: `${name} on the core ring` },
    startsAt: started[name],
    ...(endsAt ? { endsAt } : {}),
  };
};
const started: Record<string, string> = {
  // Firing for a minute when it arrives: older than group_wait, so its new group is sent at once.
  DiskFull: new Date(Date.now() - 60_000).toISOString(),
};

test('a route with group_by, group_wait, group_interval and repeat_interval notifies when a real Alertmanager does', async () => {
  const sink = await startSink(200, {});
  const dir = tempDir();
  const config = join(dir.path, 'c.yaml');
  writeFileSync(
    config,
    `adapters: [ { name: hook, type: webhook, url: "${sink.url}/onceonly" } ]
route: { receiver: hook, group_by: [team], group_wait: ${TIMING.group_wait}, group_interval: ${TIMING.group_interval}, repeat_interval: ${TIMING.repeat_interval} }
`,
  );
  const s = await spawnServer(['--port', '0', '--store', `sqlite:${join(dir.path, 'o.db')}`, '--config', config]);
  let am: AlertmanagerPeer | null = null;
  try {
    am = await startAlertmanager(
      dir.path,
      `route:
  receiver: hook
  group_by: [team]
  group_wait: ${TIMING.group_wait}
  group_interval: ${TIMING.group_interval}
  repeat_interval: ${TIMING.repeat_interval}
receivers:
  - name: hook
    webhook_configs: [ { url: "${sink.url}/alertmanager", send_resolved: true } ]
`,
    );
    const peer = am;
    // The same alerts to both: Alertmanager as Prometheus posts them, onceonly as an Alertmanager would.
    const send = async (alerts: Array<ReturnType<typeof alert>>) => {
      await postAlerts(peer, alerts);
      const r = await fetch(`${s.url}/v1/alertmanager`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          version: '4',
          status: 'firing',
          alerts: alerts.map((a) => ({
            ...a,
            status: a.endsAt ? 'resolved' : 'firing',
            endsAt: a.endsAt ?? '0001-01-01T00:00:00Z',
            fingerprint: Buffer.from(a.labels.alertname).toString('hex'),
          })),
        }),
      });
      assert.equal(r.status, 200, await r.text());
    };
    const t0 = Date.now();
    const at = (ms: number) => new Promise((r) => setTimeout(r, Math.max(0, t0 + ms - Date.now())));
    const now = () => new Date().toISOString();
    // 0 s and 1 s: two alerts, one notification at group_wait (2 s) with both.
    await send([alert('LinkDown')]);
    await at(1000);
    await send([alert('BgpDown')]);
    // 5 s: a third joins between ticks: it goes on the tick at 6 s.
    await at(5000);
    await send([alert('OspfDown')]);
    // 7.5 s: the first resolves: on the tick at 10 s.
    await at(7500);
    await send([alert('LinkDown', now())]);
    // 12 s: team db's first alert, firing for a minute already: its group goes at once (then repeats
    // on its own ticks, 11 s later: 24 s).
    await at(12_000);
    await send([alert('DiskFull', undefined, 'db')]);
    // Nothing changes for net after 10 s: repeated on the first tick 11 s after 10 s (22 s).
    // 23 s: the rest resolve: the group's last notification on the tick at 26 s.
    await at(23_000);
    await send([alert('BgpDown', now()), alert('OspfDown', now())]);
    await until(
      () =>
        (sink.requests.some((r) => r.path === '/alertmanager' && r.body.status === 'resolved') &&
          sink.requests.some((r) => r.path === '/onceonly' && r.body.action === 'close')) ||
        null,
      20_000,
      () => 'both did not finish',
    );
    await at(33_000); // a tick after the last, before db's second repeat (36 s): anything late would have come

    const firingOf = (r: { path: string; body: any }) =>
      r.path === '/alertmanager'
        ? r.body.status === 'resolved'
          ? 0
          : (r.body.alerts as Array<{ status: string }>).filter((a) => a.status === 'firing').length
        : r.body.action === 'close'
          ? 0
          : (r.body.data.member_count as number);
    const seen = (path: string) => sink.requests.filter((r) => r.path === path).map((r) => ({ t: r.at - t0, firing: firingOf(r) }));
    const fromAm = seen('/alertmanager');
    const fromUs = seen('/onceonly');
    console.log(`Alertmanager notified at ${fromAm.map((n) => `${n.t} ms (${n.firing} firing)`).join(', ')}`);
    console.log(`onceonly notified at     ${fromUs.map((n) => `${n.t} ms (${n.firing} firing)`).join(', ')}`);
    assert.deepEqual(
      fromAm.map((n) => n.firing),
      [2, 3, 2, 1, 2, 1, 0],
      'Alertmanager itself: net at group_wait, a join, a resolution; db at once; net and db repeat; net ends',
    );
    assert.deepEqual(
      fromUs.map((n) => n.firing),
      fromAm.map((n) => n.firing),
      'the same notifications, with the same alerts firing',
    );
    for (const [i, n] of fromUs.entries())
      assert.ok(Math.abs(n.t - fromAm[i]!.t) <= INTERVAL_MS, `notification ${i}: onceonly at ${n.t} ms, Alertmanager at ${fromAm[i]!.t} ms`);
    const ours = sink.requests.filter((r) => r.path === '/onceonly').map((r) => r.body);
    assert.deepEqual(
      ours.map((b) => [b.action, b.data.by.team, b.data.change.what]),
      [
        ['create', 'net', 'joined'],
        ['update', 'net', 'joined'],
        ['update', 'net', 'left'],
        ['create', 'db', 'joined'],
        ['update', 'net', 'repeat'],
        ['update', 'db', 'repeat'],
        ['close', 'net', 'left'],
      ],
    );
  } finally {
    await am?.stop();
    await s.stop();
    await sink.close();
  }
});
