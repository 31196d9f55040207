// needs: nats
/**
 * Route as sent, differentially: random alerts go in through every input
 * (HTTP incidents, the Alertmanager webhook, PagerDuty's Events API,
 * Opsgenie's Alert API, and NATS for incidents and Alertmanager payloads)
 * and are routed live to fake receivers; for each alert, the adapters that
 * received its create must be exactly what `POST /v1/routes/test` (and, for
 * a sample, `onceonly routes test`) answers for the same alert's labels, as
 * docs/routing.md lists them per input. The tree matches the producer's own
 * `severity` (Alertmanager's `critical`, PagerDuty's `error`, an incident's
 * `CRITICAL`), onceonly's `oo_severity`, and labels of each input.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { incidentKey } from '../../src/core/identity.js';
import { startSink } from '../fakes/http-fake.js';
import { runCli, spawnServer } from '../helpers/process.js';
import { seededRandom, testSeed } from '../helpers/seed.js';
import { tempDir } from '../helpers/tmp.js';
import { until } from '../helpers/wait.js';

const NATS = 'nats://127.0.0.1:4222';
const RECEIVERS = ['noc', 'page', 'page_am', 'db', 'p1', 'warn', 'major_up', 'oncall_db'];

/** Alertmanager's habits and onceonly's own labels side by side; continue makes several receivers per alert. */
const TREE = `
route:
  receiver: noc
  routes:
    - { receiver: page, matchers: ['severity="CRITICAL"'], continue: true }
    - { receiver: page_am, matchers: ['severity=~"critical|page"'], continue: true }
    - { receiver: warn, matchers: ['severity=~"warning|error"'], continue: true }
    - { receiver: p1, matchers: ['priority="P1"'], continue: true }
    - { receiver: major_up, matchers: ['oo_severity=~"CRITICAL|MAJOR"', 'team!="web"'], continue: true }
    - { receiver: oncall_db, matchers: ['responders=~"(.*,)?team:db(,.*)?"'], continue: true }
    - { receiver: db, matchers: ['team="db"'] }
`;

interface Sent {
  /** how it goes in */
  via: 'http' | 'am' | 'pd' | 'og' | 'nats-incident' | 'nats-am';
  /** the store key its deliveries carry */
  key: string;
  /** the labels docs/routing.md says this input's alert is routed by */
  labels: Record<string, string>;
  send: () => Promise<void>;
}

test('every input routes a random alert exactly where routes test says it goes', async (t) => {
  const seed = testSeed('routes-differential');
  const rnd = seededRandom(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]!;
  const run = `rd${randomBytes(4).toString('hex')}`;
  const stream = `OO_${run}`;
  const dir = tempDir();
  const hook = await startSink(200, {});
  const nc = await connect({ servers: NATS });
  const cfg = join(dir.path, 'c.yaml');
  writeFileSync(
    cfg,
    `adapters:\n${RECEIVERS.map((r) => `  - { name: ${r}, type: webhook, url: "${hook.url}/${r}" }`).join('\n')}\n${TREE}` +
      `ingest:\n  nats:\n    url: ${NATS}\n    stream: ${stream}\n    subjects: { "${run}.incidents": incident, "${run}.am": alertmanager }\n`,
  );
  const server = await spawnServer(['--port', '0', '--store', 'memory:', '--config', cfg]);
  t.after(async () => {
    await server.stop();
    await (await jetstreamManager(nc)).streams.delete(stream).catch(() => undefined);
    await nc.close();
    await hook.close();
    dir.remove();
  });
  await until(
    () => server.lines.some((l) => l.includes('NATS ingest pulling')),
    20_000,
    () => server.stderr(),
  );
  const js = jetstream(nc);
  const post = async (path: string, body: unknown) => {
    const r = await fetch(`${server.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    assert.ok(r.status < 300, `${path}: ${r.status} ${await r.text()}`);
  };
  const team = () => pick(['net', 'db', 'web']);

  const alerts: Sent[] = [];
  for (let i = 0; i < 48; i++) {
    const via = (['http', 'am', 'pd', 'og', 'nats-incident', 'nats-am'] as const)[i % 6]!;
    if (via === 'http' || via === 'nats-incident') {
      const body = {
        element_id: `${run}-el-${i}`,
        fault_class: 'LOS',
        root_cause_id: `rc-${i}`,
        severity: pick(['CRITICAL', 'MAJOR', 'MINOR', 'INFO']),
        labels: { team: team() },
      };
      alerts.push({
        via,
        key: incidentKey(body),
        labels: {
          element_id: body.element_id,
          fault_class: 'LOS',
          root_cause_id: body.root_cause_id,
          severity: body.severity,
          cleared: 'false',
          ...body.labels,
        },
        send: via === 'http' ? () => post('/v1/incidents', body) : async () => void (await js.publish(`${run}.incidents`, JSON.stringify(body))),
      });
    } else if (via === 'am' || via === 'nats-am') {
      const severity = pick(['critical', 'warning', 'info', 'page', undefined]);
      const labels: Record<string, string> = { alertname: `Alert${i}`, team: team(), ...(severity ? { severity } : {}) };
      const payload = {
        version: '4',
        status: 'firing',
        receiver: 'onceonly',
        alerts: [{ status: 'firing', labels, annotations: {}, startsAt: new Date().toISOString(), fingerprint: `${run}${i}` }],
      };
      alerts.push({
        via,
        key: `am:${run}${i}`,
        labels,
        send: via === 'am' ? () => post('/v1/alertmanager', payload) : async () => void (await js.publish(`${run}.am`, JSON.stringify(payload))),
      });
    } else if (via === 'pd') {
      const severity = pick(['critical', 'error', 'warning', 'info']);
      const component = team();
      alerts.push({
        via,
        key: `pd:${run}-${i}`,
        labels: { source: `host-${i}`, component, severity, dedup_key: `pd:${run}-${i}` },
        send: () =>
          post('/v2/enqueue', {
            routing_key: 'r',
            event_action: 'trigger',
            dedup_key: `${run}-${i}`,
            payload: { summary: `pd ${i}`, source: `host-${i}`, severity, component },
          }),
      });
    } else {
      const priority = pick(['P1', 'P2', 'P3', 'P4', 'P5'] as const);
      const t = team();
      // Opsgenie sends no severity: its alerts carry onceonly's, mapped from the priority.
      const severity = { P1: 'CRITICAL', P2: 'MAJOR', P3: 'MINOR', P4: 'INFO', P5: 'INFO' }[priority];
      // Whom Opsgenie would page, as sent: a label too.
      const responders = pick([
        [],
        [{ type: 'team', name: team() }],
        [
          { type: 'user', username: 'alice' },
          { type: 'team', name: team() },
        ],
      ]);
      const label = responders.map((r) => ('name' in r ? `${r.type}:${r.name}` : `${r.type}:${r.username}`)).join(',');
      alerts.push({
        via,
        key: `og:${run}-${i}`,
        labels: { alias: `${run}-${i}`, priority, team: t, severity, dedup_key: `og:${run}-${i}`, ...(label ? { responders: label } : {}) },
        send: () => post('/v2/alerts', { message: `og ${i}`, alias: `${run}-${i}`, priority, details: { team: t }, responders }),
      });
    }
  }

  // What routes test answers for each alert's labels, before anything is sent.
  const expected = new Map<string, string[]>();
  for (const a of alerts) {
    const r = await fetch(`${server.url}/v1/routes/test`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ labels: a.labels }),
    });
    const text = await r.text();
    assert.equal(r.status, 200, text);
    expected.set(a.key, [...new Set((JSON.parse(text) as { adapters: string[] }).adapters)].sort());
  }
  // The CLI builds the labels through the same function: one alert of each input, through the same config.
  for (const via of new Set(alerts.map((a) => a.via))) {
    const a = alerts.find((x) => x.via === via)!;
    const cli = runCli(['routes', 'test', '--config', cfg, ...Object.entries(a.labels).map(([k, v]) => `${k}=${JSON.stringify(v)}`)]);
    assert.equal(cli.status, 0, cli.stderr);
    assert.deepEqual([...new Set(cli.stdout.trim().split(','))].sort(), expected.get(a.key), `seed ${seed}: the CLI and the API disagree on a ${via} alert`);
  }
  // Sanity of the draw: the tree sends alerts to more than the root.
  assert.ok(new Set([...expected.values()].flat()).size >= 4, `seed ${seed}: the draw reached too few receivers to compare`);

  for (const a of alerts) await a.send();
  const total = [...expected.values()].reduce((n, list) => n + list.length, 0);
  // Fewer than expected may be a misroute as well as a slow delivery: after the wait, the comparison below says which alert.
  await until(
    () => hook.requests.length >= total || null,
    20_000,
    () => '',
  ).catch(() => undefined);
  await new Promise((r) => setTimeout(r, 500));
  const got = new Map<string, string[]>();
  for (const r of hook.requests) {
    assert.equal(r.body.action, 'create');
    (got.get(r.body.key) ?? got.set(r.body.key, []).get(r.body.key)!).push(r.path.slice(1));
  }
  for (const a of alerts)
    assert.deepEqual((got.get(a.key) ?? []).sort(), expected.get(a.key), `seed ${seed}: a ${via(a)} alert went elsewhere than routes test said`);
});

const via = (a: Sent) => `${a.via} ${JSON.stringify(a.labels)}`;
