import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { freePort } from './free-port.js';
import { until } from './wait.js';

export interface AlertmanagerPeer {
  url: string;
  proc: ChildProcess;
  log: () => string;
  stop(): Promise<void>;
}

/** Where the peers notify: a webhook URL, or an Opsgenie receiver (`opsgenie_configs`) whose API is at `api_url`. */
export type AlertmanagerReceiver = string | { opsgenie: { api_url: string; api_key: string; update_alerts?: boolean; message?: string } };

/** The receiver's YAML lines, under `- name: onceonly`. */
function receiverYaml(r: AlertmanagerReceiver): string {
  if (typeof r === 'string') return `    webhook_configs:\n      - url: ${JSON.stringify(r)}\n        send_resolved: true\n`;
  const { api_url, api_key, update_alerts, message } = r.opsgenie;
  return (
    `    opsgenie_configs:\n      - api_url: ${JSON.stringify(api_url)}\n        api_key: ${JSON.stringify(api_key)}\n        priority: P2\n        send_resolved: true\n` +
    (update_alerts ? '        update_alerts: true\n' : '') +
    (message ? `        message: ${JSON.stringify(message)}\n` : '')
  );
}

/**
 * Debian's `prometheus-alertmanager` (0.25), clustered: `n` peers gossiping
 * on free loopback ports, each with one receiver pointed at onceonly (a
 * webhook URL, or an Opsgenie receiver), group_wait and group_interval of
 * 1 s. Stopped by PID.
 */
export async function startAlertmanagerCluster(
  dir: string,
  webhook: AlertmanagerReceiver,
  n = 2,
  /** the route's timings (a Watchdog's heartbeat wants a short repeat_interval) */
  timing: { group_wait?: string; group_interval?: string; repeat_interval?: string } = {},
): Promise<AlertmanagerPeer[]> {
  const t = { group_wait: '1s', group_interval: '1s', repeat_interval: '1h', ...timing };
  const config = join(dir, 'alertmanager.yml');
  writeFileSync(
    config,
    `route:
  receiver: onceonly
  group_by: ['alertname']
  group_wait: ${t.group_wait}
  group_interval: ${t.group_interval}
  repeat_interval: ${t.repeat_interval}
receivers:
  - name: onceonly
${receiverYaml(webhook)}`,
  );
  const web = await Promise.all(Array.from({ length: n }, () => freePort()));
  const gossip = await Promise.all(Array.from({ length: n }, () => freePort()));
  const peers = web.map((port, i) =>
    spawnPeer(config, join(dir, `am-${i}`), port, [
      `--cluster.listen-address=127.0.0.1:${gossip[i]}`,
      `--cluster.advertise-address=127.0.0.1:${gossip[i]}`,
      ...gossip.filter((_, j) => j !== i).map((g) => `--cluster.peer=127.0.0.1:${g}`),
    ]),
  );
  for (const p of peers) await ready(p);
  // Both peers see each other before the test starts, so they run as one HA cluster.
  await until(
    async () => {
      const st = (await (await fetch(`${peers[0]!.url}/api/v2/status`)).json()) as { cluster?: { peers?: unknown[] } };
      return (st.cluster?.peers?.length ?? 0) >= n;
    },
    20_000,
    () => 'peers did not join',
  );
  return peers;
}

/** One Alertmanager on a free loopback port, not clustered, with the given config file's text. Stopped by PID. */
export async function startAlertmanager(dir: string, configYaml: string): Promise<AlertmanagerPeer> {
  const config = join(dir, 'alertmanager-single.yml');
  writeFileSync(config, configYaml);
  const peer = spawnPeer(config, join(dir, 'am-single'), await freePort(), ['--cluster.listen-address=']);
  await ready(peer);
  return peer;
}

function spawnPeer(config: string, storage: string, port: number, cluster: string[]): AlertmanagerPeer {
  const args = [`--config.file=${config}`, `--storage.path=${storage}`, `--web.listen-address=127.0.0.1:${port}`, ...cluster, '--log.level=warn'];
  const proc = spawn('prometheus-alertmanager', args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let log = '';
  proc.stderr!.on('data', (d) => (log += d));
  return {
    url: `http://127.0.0.1:${port}`,
    proc,
    log: () => log,
    async stop() {
      if (proc.exitCode !== null || proc.signalCode !== null) return;
      const exited = once(proc, 'exit');
      proc.kill('SIGTERM');
      await exited;
    },
  };
}

const ready = (p: AlertmanagerPeer) =>
  until(
    async () => (await fetch(`${p.url}/-/ready`).catch(() => null))?.ok,
    20_000,
    () => `alertmanager ${p.url} not ready: ${p.log()}`,
  );

/** A disk-full alert as Prometheus sends it, from `startsAt`: give it the `endsAt` of a firing (ahead) or a resolution (now). */
export function diskFullAlert(startsAt: string) {
  return (endsAt: string) => ({
    labels: { alertname: 'DiskFull', instance: 'db1:9100', severity: 'critical' },
    annotations: { summary: 'db1: disk 97% full' },
    startsAt,
    endsAt,
    generatorURL: 'http://prometheus.example/graph',
  });
}

/** Posts alerts to a peer, as Prometheus does to every Alertmanager it knows. */
export async function postAlerts(peer: AlertmanagerPeer, alerts: unknown[]): Promise<void> {
  const r = await fetch(`${peer.url}/api/v2/alerts`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(alerts) });
  if (!r.ok) throw new Error(`alertmanager ${peer.url} refused alerts: ${r.status} ${await r.text()}`);
}

/** A peer's count of webhook notifications sent (its own metric). */
export async function notificationsSent(peer: AlertmanagerPeer): Promise<number> {
  const text = await (await fetch(`${peer.url}/metrics`)).text();
  const m = /^alertmanager_notifications_total\{integration="webhook"\} (\d+)/m.exec(text);
  return m ? Number(m[1]) : 0;
}
