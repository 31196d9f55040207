// needs: mosquitto
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { connectAsync, type MqttClient } from 'mqtt';
import { deliveryHarness } from '../helpers/delivery.js';
import { topicFor } from '../../src/delivery/adapters/mqtt.js';
import { receiverQuiet } from '../helpers/settle.js';
import { until } from '../helpers/wait.js';

// Real Mosquitto on 127.0.0.1:1883 (npm test's pretest starts it when it is down).
const BROKER = 'mqtt://127.0.0.1:1883';

/** Subscribes and collects messages; retained ones arrive on subscribe. */
async function listen(topic: string): Promise<{ client: MqttClient; got: Array<{ topic: string; body: any; retain: boolean; at: number }> }> {
  const client = await connectAsync(BROKER, { clientId: `t-${randomUUID()}` });
  const got: Array<{ topic: string; body: any; retain: boolean; at: number }> = [];
  client.on('message', (t, payload, packet) => {
    // an empty payload is the clean-up that clears a retained message
    if (payload.length > 0) got.push({ topic: t, body: JSON.parse(payload.toString()), retain: packet.retain, at: Date.now() });
  });
  await client.subscribeAsync(topic, { qos: 1 });
  return { client, got };
}

test('mqtt: a violation is published once, QoS 1 and retained, on its process and rule topic', async () => {
  const ns = `oo-test-${randomUUID().slice(0, 8)}`;
  const h = deliveryHarness({ adapters: [{ name: 'mes', type: 'mqtt', url: BROKER, topic: `${ns}/{data.process_id}/{data.rule_id}` }] });
  const live = await listen(`${ns}/#`);
  let late: MqttClient | undefined;
  try {
    const v = { process_id: 'etch/line 3', rule_id: 'nelson_1', timestamp: 1770000000, value: 12.9, center: 10, ucl: 12.5, lcl: 7.5 };
    for (let i = 0; i < 5; i++) await h.violations.apply({ ...v, timestamp: v.timestamp + i });
    await h.drain();
    await until(() => live.got.length >= 1, 5000);
    await receiverQuiet(() => live.got, 200);
    assert.equal(live.got.length, 1, 'five re-fires, one message');
    const [m] = live.got;
    assert.equal(m!.topic, `${ns}/etch_line 3/nelson_1`, 'a / inside a value cannot add a topic level');
    assert.equal(m!.body.kind, 'violation');
    assert.equal(m!.body.data.alarm_code, 'SPC-BEYOND-3S');
    assert.match(m!.body.idempotency_key, /^[0-9a-f]{40}:create:1$/);
    assert.deepEqual(
      h.settled.map((s) => [s.outcome, s.reason]),
      [['delivered', 'ok']],
    );

    // A historian that connects later reads the latest state at once: retained.
    const after = await listen(`${ns}/#`);
    late = after.client;
    await until(() => after.got.length >= 1, 5000);
    assert.equal(after.got[0]!.retain, true);
    assert.equal(after.got[0]!.body.key, m!.body.key);
  } finally {
    // Clear the retained message so the broker keeps nothing of the test.
    await live.client.publishAsync(`${ns}/etch_line 3/nelson_1`, '', { retain: true, qos: 1 });
    await Promise.all([live.client.endAsync(), late?.endAsync()]);
    await h.close();
  }
});

test('mqtt: an unreachable broker is a retried network error, not a hang', async () => {
  const h = deliveryHarness({ adapters: [{ name: 'mes', type: 'mqtt', url: 'mqtt://127.0.0.1:9', timeout_ms: 300 }] });
  try {
    await h.violations.apply({ process_id: 'p', rule_id: 'nelson_1', timestamp: 1770000000, value: 1, center: 0, ucl: 1, lcl: -1 });
    await h.drain();
    assert.deepEqual(
      h.settled.map((s) => [s.outcome, s.reason]),
      [['retried', 'network']],
    );
    assert.match(h.settled[0]!.error!, /no PUBACK .* within 300 ms \(not connected\)/);
  } finally {
    await h.close();
  }
});

test('mqtt topics: placeholders filled, wildcards and separators neutralised, a missing field is _', () => {
  const e = {
    tenant: 'acme',
    kind: 'violation' as const,
    action: 'create' as const,
    key: 'k1',
    severity: 'MAJOR',
    summary: '',
    data: { process_id: 'a+b#c', rule_id: 'r' },
    at: 0,
  };
  assert.equal(topicFor('spc/{tenant}/{data.process_id}/{data.rule_id}/{data.none}/{action}', e), 'spc/acme/a_b_c/r/_/create');
  assert.equal(topicFor('onceonly/{kind}/{key}', e), 'onceonly/violation/k1');
});
