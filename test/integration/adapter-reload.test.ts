// needs: mosquitto
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { connect as tcp, createServer, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { connectAsync } from 'mqtt';
import { deliveryHarness } from '../helpers/delivery.js';
import { until } from '../helpers/wait.js';

// Real Mosquitto on 127.0.0.1:1883, behind a proxy the test can pause.
const BROKER_PORT = 1883;

/**
 * A TCP proxy to the broker that passes the client's first packet (its
 * CONNECT) and then holds what the client sends until released: a publish
 * the test can keep in flight for as long as it likes.
 */
async function pausingProxy() {
  const held: Array<{ to: Socket; data: Buffer }> = [];
  let holding = true;
  const server = createServer((client) => {
    const broker = tcp(BROKER_PORT, '127.0.0.1');
    let first = true;
    client.on('data', (d) => {
      if (first || !holding) broker.write(d);
      else held.push({ to: broker, data: d });
      first = false;
    });
    broker.on('data', (d) => client.write(d));
    const end = () => {
      client.destroy();
      broker.destroy();
    };
    client.on('close', end);
    broker.on('close', end);
    client.on('error', end);
    broker.on('error', end);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `mqtt://127.0.0.1:${(server.address() as AddressInfo).port}`,
    held,
    release() {
      holding = false;
      for (const h of held.splice(0)) h.to.write(h.data);
    },
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

test('a reload while an MQTT publish is in flight lets it land: the replaced adapter closes after its call, not under it', async () => {
  const proxy = await pausingProxy();
  const ns = `oo-reload-${randomUUID().slice(0, 8)}`;
  const listener = await connectAsync(`mqtt://127.0.0.1:${BROKER_PORT}`, { clientId: `t-${randomUUID()}` });
  const got: string[] = [];
  listener.on('message', (t, payload) => payload.length > 0 && got.push(t));
  await listener.subscribeAsync(`${ns}/#`, { qos: 1 });
  const adapter = { name: 'mes', type: 'mqtt' as const, url: proxy.url, topic: `${ns}/{data.process_id}`, timeout_ms: 10_000 };
  const h = deliveryHarness({ adapters: [adapter] });
  try {
    await h.violations.apply({ process_id: 'etch', rule_id: 'nelson_1', timestamp: 1770000000, value: 12.9, center: 10, ucl: 12.5, lcl: 7.5 });
    const pass = h.drain();
    await until(
      () => proxy.held.length > 0,
      10_000,
      () => 'the publish never left the adapter',
    );
    // A reload (the same adapter, a new config object) while that publish waits for its PUBACK.
    h.reconfigure({ adapters: [{ ...adapter }] });
    h.registry.current();
    assert.equal(h.registry.draining, 1, 'the replaced adapter waits for its call');
    proxy.release();
    await pass;
    assert.deepEqual(
      h.settled.map((s) => [s.outcome, s.error ?? '']),
      [['delivered', '']],
      'delivered on its first attempt, with no failure to retry',
    );
    await until(
      () => got.length > 0,
      5000,
      () => 'the broker never had the message',
    );
    assert.deepEqual(got, [`${ns}/etch`], 'one message');
    await until(
      () => h.registry.draining === 0,
      5000,
      () => 'the replaced adapter was never closed',
    );
  } finally {
    await h.close();
    await listener.publishAsync(`${ns}/etch`, '', { retain: true, qos: 1 });
    await listener.endAsync();
    await proxy.close();
  }
});
