// needs: alertmanager redis
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type FakeServer, startSink } from '../fakes/http-fake.js';
import { diskFullAlert, postAlerts, startAlertmanagerCluster, type AlertmanagerPeer } from '../helpers/alertmanager.js';
import { spawnServer } from '../helpers/process.js';
import { tempDir } from '../helpers/tmp.js';
import { until } from '../helpers/wait.js';

/** A peer's Opsgenie notifications: sent, and failed (its own metrics). */
async function opsgenieNotifications(peer: AlertmanagerPeer): Promise<{ sent: number; failed: number }> {
  const text = await (await fetch(`${peer.url}/metrics`)).text();
  const count = (name: string) => Number(new RegExp(`^${name}\\{integration="opsgenie"\\} (\\d+)`, 'm').exec(text)?.[1] ?? 0);
  return { sent: count('alertmanager_notifications_total'), failed: count('alertmanager_notifications_failed_total') };
}

/**
 * onceonly on SQLite with a webhook adapter, and one Debian Alertmanager whose `opsgenie_configs`
 * (with `options`) points at it, repeat_interval 2 s: the peer notifies the same firing group again and
 * again, as it would hourly.
 */
async function withAlertmanager(
  options: { update_alerts?: boolean; message?: string },
  body: (rig: { am: AlertmanagerPeer; hook: FakeServer; get: (path: string) => Promise<any> }) => Promise<void>,
) {
  const hook = await startSink(200, {});
  const dir = tempDir();
  const token = 'opsgenie-api-key-0123456789abcdef';
  const config = join(dir.path, 'c.yaml');
  writeFileSync(config, `tenants:\n  - { id: acme, tokens: ["${token}"] }\nadapters: [ { name: hook, type: webhook, url: "${hook.url}/in" } ]\n`);
  const s = await spawnServer(['--port', '0', '--store', `sqlite:${join(dir.path, 'o.db')}`, '--config', config]);
  const get = async (path: string) => (await fetch(`${s.url}${path}`, { headers: { authorization: `Bearer ${token}` } })).json() as Promise<any>;
  let peers: AlertmanagerPeer[] = [];
  try {
    peers = await startAlertmanagerCluster(dir.path, { opsgenie: { api_url: `${s.url}/`, api_key: token, ...options } }, 1, { repeat_interval: '2s' });
    await body({ am: peers[0]!, hook, get });
  } finally {
    for (const p of peers) await p.stop();
    await s.stop();
    await hook.close();
    dir.remove();
  }
}

// A team moving off Opsgenie repoints Alertmanager's `opsgenie_configs` at onceonly and changes nothing
// else: Debian's real Alertmanager (its own Opsgenie client) creates the alert, sends it again at every
// repeat_interval, and closes it when it resolves. One create and one close reach the ticketing.
test("Alertmanager's opsgenie_configs pointed at onceonly: created once, repeats suppressed, closed on resolve", async () => {
  await withAlertmanager({}, async ({ am, hook, get }) => {
    const startsAt = new Date(Date.now() - 1000).toISOString();
    const alert = diskFullAlert(startsAt);
    await postAlerts(am, [alert(new Date(Date.now() + 3_600_000).toISOString())]);
    const key = await until(
      async () => ((await get('/v1/incidents')).incidents as Array<{ dedup_key: string }>).find((i) => i.dedup_key.startsWith('og:'))?.dedup_key,
      30_000,
      () => `no og: incident; alertmanager: ${am.log()}`,
    );
    const path = `/v1/incidents/${encodeURIComponent(key)}`;
    const shown = await get(path);
    assert.equal(shown.severity, 'MAJOR', "the receiver's priority P2");
    assert.equal(shown.labels.alertname, 'DiskFull', "the group's common labels arrive as details, and are labels");
    assert.equal(shown.labels.instance, 'db1:9100');
    // At least two repeats (each one suppressed) before the resolution.
    await until(
      async () => (await opsgenieNotifications(am)).sent >= 3 && ((await get(path)).refires ?? 0) >= 2,
      30_000,
      () => 'no repeats',
    );

    await postAlerts(am, [alert(new Date().toISOString())]);
    await until(
      () => hook.requests.some((r) => r.body.action === 'close'),
      30_000,
      () => `no close delivered; alertmanager: ${am.log()}`,
    );
    const history = (await get(`${path}/history`)).events as Array<{ type: string; decision?: string }>;
    const decided = history.filter((e) => e.type === 'decision').map((e) => e.decision);
    assert.equal(decided[0], 'CREATE');
    assert.ok(
      decided.slice(1).every((d) => d === 'SUPPRESS'),
      `every repeat suppressed: ${decided.join(',')}`,
    );
    const closedAt = history.findIndex((e) => e.type === 'closed');
    assert.ok(closedAt > history.findLastIndex((e) => e.type === 'decision'), `closed after the last decision: ${history.map((e) => e.type).join(',')}`);
    const actions = hook.requests.filter((r) => r.body.key === key).map((r) => r.body.action);
    assert.deepEqual(actions, ['create', 'close'], 'one create and one close at the ticketing');
    assert.equal((await opsgenieNotifications(am)).failed, 0, "Alertmanager's Opsgenie client took every answer as a success");
  });
});

// `update_alerts: true`: with every notification, Alertmanager's Opsgenie client also edits the alert's
// message and description. The same text again changes nothing; a new summary reaches the ticketing once
// per field it changed.
test("Alertmanager's opsgenie_configs with update_alerts: a changed message is one update, the same text none", async () => {
  await withAlertmanager({ update_alerts: true, message: '{{ .CommonAnnotations.summary }}' }, async ({ am, hook, get }) => {
    const startsAt = new Date(Date.now() - 1000).toISOString();
    const alert = diskFullAlert(startsAt);
    const endsAt = new Date(Date.now() + 3_600_000).toISOString();
    await postAlerts(am, [alert(endsAt)]);
    const key = await until(
      async () => ((await get('/v1/incidents')).incidents as Array<{ dedup_key: string }>).find((i) => i.dedup_key.startsWith('og:'))?.dedup_key,
      30_000,
      () => `no og: incident; alertmanager: ${am.log()}`,
    );
    const path = `/v1/incidents/${encodeURIComponent(key)}`;
    // Two repeats, each with its edits of the same message and description: nothing sent but the create.
    await until(
      async () => (await opsgenieNotifications(am)).sent >= 3 || null,
      30_000,
      () => 'no repeats',
    );
    const sent = () =>
      hook.requests
        .filter((r) => r.body.key === key)
        .map((r) => `${r.body.action} ${r.body.summary}${r.body.data?.description?.includes('99%') ? ' (its description)' : ''}`);
    assert.deepEqual(sent(), ['create db1: disk 97% full'], `the same text edits nothing: ${sent().join('; ')}`);
    // The alert's summary changes: the next repeat edits the message, and the ticketing hears it once.
    await postAlerts(am, [{ ...alert(endsAt), annotations: { summary: 'db1: disk 99% full' } }]);
    await until(
      () => sent().length >= 3 || null,
      30_000,
      () => `no update; delivered: ${sent().join('; ')}`,
    );
    assert.equal((await get(path)).summary, 'db1: disk 99% full');
    const before = (await opsgenieNotifications(am)).sent;
    await until(
      async () => (await opsgenieNotifications(am)).sent >= before + 2 || null,
      30_000,
      () => 'no further repeats',
    );
    // Its default description lists the annotations, so it changed too: one update each, none for the repeats.
    assert.deepEqual(
      sent(),
      ['create db1: disk 97% full', 'update db1: disk 99% full', 'update db1: disk 99% full (its description)'],
      'one update for each new text, none for their repeats',
    );
    const reasons = ((await get(`${path}/history`)).events as Array<{ type: string; decision?: string; reason?: string }>)
      .filter((e) => e.type === 'decision' && e.decision === 'UPDATE')
      .map((e) => e.reason);
    assert.deepEqual(reasons, ['amended', 'amended']);
    assert.equal((await opsgenieNotifications(am)).failed, 0, "Alertmanager's Opsgenie client took every answer as a success");
  });
});
