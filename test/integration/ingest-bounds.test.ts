// needs: nats mosquitto
/**
 * Broker ingest is held to the HTTP route's limits: a message over
 * `limits.body_bytes` (MQTT as NATS), an Alertmanager payload of more than
 * `limits.alerts_per_post` alerts, and JSON nested far too deep are refused
 * whole, with the reason, acknowledged and never decided; nothing overflows
 * the stack.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect as natsConnect } from '@nats-io/transport-node';
import { connectAsync as mqttConnect } from 'mqtt';
import { inProcessServer, type InProcessServer } from '../helpers/server.js';
import { until } from '../helpers/wait.js';

const metric = async (s: InProcessServer, re: RegExp) => Number(re.exec(await (await fetch(`${s.url}/metrics`)).text())?.[1] ?? 0);
const alerts = (n: number, run: string) =>
  JSON.stringify({
    version: '4',
    status: 'firing',
    alerts: Array.from({ length: n }, (_, i) => ({
      status: 'firing',
      labels: { alertname: `A${i}` },
      annotations: {},
      startsAt: '2026-12-01T00:00:00Z',
      fingerprint: `${run}${i}`,
    })),
  });
const deep = (n: number) => `{"element_id":"e","fault_class":"f","root_cause_id":"r","severity":"MAJOR","details":${'{"a":'.repeat(n)}1${'}'.repeat(n)}}`;

test('NATS: too many alerts and too deep a message are refused whole, acknowledged, never decided', async (t) => {
  const run = `ib${randomBytes(4).toString('hex')}`;
  const nc = await natsConnect({ servers: 'nats://127.0.0.1:4222' });
  const s = await inProcessServer({
    store: 'memory',
    config:
      // A body bound above the deep message's 600 KB: it is refused for its depth, not its size.
      'limits: { alerts_per_post: 10, body_bytes: 1048576 }\n' +
      `ingest:\n  nats:\n    url: nats://127.0.0.1:4222\n    stream: OO_${run}\n    subjects: { "${run}.am": alertmanager, "${run}.in": incident }\n`,
  });
  t.after(async () => {
    await s.stop();
    await (await jetstreamManager(nc)).streams.delete(`OO_${run}`).catch(() => undefined);
    await nc.close();
  });
  await new Promise((r) => setTimeout(r, 500));
  const js = jetstream(nc);
  await js.publish(`${run}.am`, alerts(11, run));
  await js.publish(`${run}.in`, deep(100_000));
  await js.publish(`${run}.am`, alerts(10, `${run}ok`));
  await until(async () => (await metric(s, /^onceonly_ingest_nats_messages_total\{outcome="rejected"\} (\d+)/m)) === 2 || null, 20_000);
  await until(async () => (await s.store.queries.listIncidents('default', 100)).length === 10 || null, 20_000);
  const live = await s.store.queries.listIncidents('default', 100);
  assert.ok(
    live.every((r) => r.key.startsWith(`am:${run}ok`)),
    'only the payload within the bound was decided',
  );
});

test('MQTT: a message over limits.body_bytes is refused, never decided', async (t) => {
  const run = `ib${randomBytes(4).toString('hex')}`;
  const s = await inProcessServer({
    store: 'memory',
    config: `limits: { body_bytes: 16384 }\ningest:\n  mqtt:\n    url: mqtt://127.0.0.1:1883\n    topics: { "${run}/+": incident }\n    shared_group: ${run}\n    client_id: ${run}\n`,
  });
  const publisher = await mqttConnect('mqtt://127.0.0.1:1883', { protocolVersion: 5 });
  t.after(async () => {
    await publisher.endAsync();
    await s.stop();
  });
  await until(async () => (await metric(s, /^onceonly_ingest_mqtt_connected (\d+)/m)) === 1 || null, 10_000);
  await new Promise((r) => setTimeout(r, 300));
  const big = JSON.stringify({ element_id: 'big', fault_class: 'f', root_cause_id: 'r', severity: 'MAJOR', summary: 'x'.repeat(20_000) });
  const small = JSON.stringify({ element_id: 'small', fault_class: 'f', root_cause_id: 'r', severity: 'MAJOR' });
  await publisher.publishAsync(`${run}/f`, big, { qos: 1 });
  // Within the bound, and far deeper than any body: refused for its depth.
  await publisher.publishAsync(`${run}/f`, deep(2000), { qos: 1 });
  await publisher.publishAsync(`${run}/f`, small, { qos: 1 });
  await until(async () => (await metric(s, /^onceonly_ingest_mqtt_messages_total\{outcome="rejected"\} (\d+)/m)) === 2 || null, 20_000);
  await until(async () => (await s.store.queries.listIncidents('default', 10)).length === 1 || null, 20_000);
});
