// needs: mosquitto
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { connectAsync, type MqttClient } from 'mqtt';
import { recordedStream } from '../helpers/device-drill.js';
import { spawnServer, type ServerProcess } from '../helpers/process.js';
import { tempDir } from '../helpers/tmp.js';
import { until } from '../helpers/wait.js';

const BROKER = 'mqtt://127.0.0.1:1883';

interface Stats {
  received: number;
  applied: number;
  duplicate: number;
  rejected: Record<string, number>;
}
const stats = async (s: ServerProcess) => (await (await fetch(`${s.url}/v1/stats`)).json()) as Stats;
const sumOf = (xs: Stats[], f: (s: Stats) => number) => xs.reduce((n, s) => n + f(s), 0);
const rejectedOf = (s: Stats) => Object.values(s.rejected).reduce((a, b) => a + b, 0);
/** A replica's count of MQTT messages by outcome (its own metric). */
async function taken(s: ServerProcess, outcome: string): Promise<number> {
  const text = await (await fetch(`${s.url}/metrics`)).text();
  return Number(new RegExp(`^onceonly_ingest_mqtt_messages_total\\{outcome="${outcome}"\\} (\\d+)`, 'm').exec(text)?.[1] ?? 0);
}

/** A replica's config file: the run's topic filters through the run's shared group, its own client id, and `more` (lines under mqtt). */
function replicaConfig(dir: string, run: string, replica: string, topics: string, more = ''): string {
  const file = join(dir, `${replica}.yaml`);
  writeFileSync(file, `ingest:\n  mqtt:\n    url: ${BROKER}\n    topics: ${topics}\n    shared_group: g-${run}\n    client_id: ${run}-${replica}\n${more}`);
  return file;
}
/** Resolves once the replica has subscribed (its log says so at every connect). */
const subscribed = (s: ServerProcess) =>
  until(
    () => s.lines.some((l) => l.includes('MQTT ingest subscribed')),
    20_000,
    () => s.stderr(),
  );

// The device drill of docs/events.md published to Mosquitto instead of posted: 50 terminals × 40
// events, every tenth repeated at once, reboots. Two replicas on one store share the subscription,
// so the broker splits the messages between them. The producer sends a round (one event per
// terminal) and waits until it is accounted before the next, so no two events of one terminal are in
// flight together (as the HTTP drill's replay does). The accounting comes out as over HTTP.
test('the device drill over MQTT through two replicas sharing a subscription: the accounting of the HTTP drill', async () => {
  const run = `oo-test-${randomBytes(4).toString('hex')}`;
  const dir = tempDir();
  const config = (replica: string) =>
    replicaConfig(dir.path, run, replica, `{ "${run}/devices/+": event, "${run}/faults": incident }`, `    reject_topic: ${run}/rejected\n`);
  const store = `sqlite:${join(dir.path, 'o.db')}`;
  const a = await spawnServer(['--port', '0', '--store', store, '--config', config('a')]);
  const b = await spawnServer(['--port', '0', '--store', store, '--config', config('b')]);
  const producer: MqttClient = await connectAsync(BROKER, { protocolVersion: 5, clientId: `${run}-producer` });
  const watcher: MqttClient = await connectAsync(BROKER, { protocolVersion: 5, clientId: `${run}-watcher` });
  try {
    await Promise.all([subscribed(a), subscribed(b)]);
    const rejects: Array<{ payload: string; reason: unknown }> = [];
    watcher.on('message', (_t, payload, packet) =>
      rejects.push({ payload: payload.toString(), reason: packet.properties?.userProperties?.['onceonly-reason'] }),
    );
    await watcher.subscribeAsync(`${run}/rejected`, { qos: 1 });

    const s = recordedStream();
    let sent = 0;
    for (const round of s.rounds) {
      for (const line of round) await producer.publishAsync(`${run}/devices/${JSON.parse(line).device_id}`, line, { qos: 1 });
      sent += round.length;
      await until(
        async () => sumOf(await Promise.all([stats(a), stats(b)]), (x) => x.received) === sent,
        30_000,
        () => `round not accounted (${sent} sent)`,
      );
    }
    const [sa, sb] = await Promise.all([stats(a), stats(b)]);
    console.log(`replica A: ${JSON.stringify(sa)}; replica B: ${JSON.stringify(sb)}`);
    assert.equal(sa.received + sb.received, s.lines.length, 'received = what was published');
    assert.equal(sa.applied + sb.applied, s.identities, 'applied = unique identities');
    assert.equal(sa.duplicate + sb.duplicate, s.lines.length - s.identities, 'duplicate = the repeats');
    assert.deepEqual([sa.rejected, sb.rejected], [{}, {}]);
    for (const x of [sa, sb]) assert.equal(x.received, x.applied + x.duplicate + rejectedOf(x), 'each replica reconciles');
    assert.ok((await taken(a, 'decided')) > 0 && (await taken(b, 'decided')) > 0, 'the broker split the messages between the replicas');
    for (const [device, want] of s.expected) {
      const d = (await (await fetch(`${a.url}/v1/devices/acme/${device}`)).json()) as Record<string, unknown>;
      assert.deepEqual({ boot: d.boot_id, sequence: d.sequence, state: d.state }, want, device);
    }

    // A message that is not valid input is acknowledged, counted, and published to the reject topic with the reason.
    await producer.publishAsync(`${run}/devices/pos-x`, '{"device_id": 7}', { qos: 1 });
    await producer.publishAsync(`${run}/faults`, 'not json', { qos: 1 });
    // What the HTTP parser refuses is refused here too: bytes that are not UTF-8, a key that reaches a prototype.
    await producer.publishAsync(`${run}/faults`, Buffer.from([0x7b, 0xff, 0x7d]), { qos: 1 });
    await producer.publishAsync(`${run}/faults`, '{"__proto__": {"severity": "CRITICAL"}}', { qos: 1 });
    await until(
      () => rejects.length === 4,
      20_000,
      () => `${rejects.length} rejects seen`,
    );
    // The two replicas take them in either order: by payload.
    const why = new Map(rejects.map((r) => [r.payload, String(r.reason)]));
    assert.equal(why.size, 4);
    assert.match(why.get('{"device_id": 7}')!, /^invalid: invalid event: /);
    assert.match(why.get('not json')!, /^invalid: not JSON: /);
    assert.equal(why.get('{\ufffd}'), 'invalid: not valid UTF-8');
    assert.equal(why.get('{"__proto__": {"severity": "CRITICAL"}}'), 'invalid: a "__proto__" key is not taken');
    const after = await Promise.all([stats(a), stats(b)]);
    assert.equal(
      sumOf(after, (x) => x.rejected.invalid ?? 0),
      1,
      'the bad event is a rejected event, as over HTTP',
    );
    assert.equal(
      sumOf(after, (x) => x.received),
      s.lines.length + 1,
    );

    // An incident published twice (a reconnecting producer) is one CREATE.
    const fault = JSON.stringify({ element_id: 'olt-9', fault_class: 'LOS', root_cause_id: `cut-${run}`, severity: 'MAJOR' });
    await producer.publishAsync(`${run}/faults`, fault, { qos: 1 });
    await producer.publishAsync(`${run}/faults`, fault, { qos: 1 });
    const incident = await until(
      async () => {
        const list = ((await (await fetch(`${a.url}/v1/incidents`)).json()) as { incidents: Array<{ refires: number }> }).incidents;
        return list.length === 1 && list[0]!.refires === 1 ? list[0] : null;
      },
      20_000,
      () => 'the incident was not decided twice',
    );
    assert.equal(incident.refires, 1, 'one CREATE, one SUPPRESS');
  } finally {
    await Promise.all([producer.endAsync(), watcher.endAsync()]);
    await Promise.all([a.stop(), b.stop()]);
    dir.remove();
  }
});

// A PUBACK only after the decision: a replica killed (SIGKILL) mid-stream leaves what it had taken and not
// acknowledged in its session at the broker; restarted with its client id, it is sent that again. No
// event is lost: after every round each terminal is at that round's event, whichever replica took it.
test('a replica killed mid-stream loses nothing: its unacknowledged messages come back to it when it returns', async () => {
  const run = `oo-test-${randomBytes(4).toString('hex')}`;
  const dir = tempDir();
  const config = (replica: string) => replicaConfig(dir.path, run, replica, `{ "${run}/devices/+": event }`);
  const args = (replica: string) => ['--port', '0', '--store', `sqlite:${join(dir.path, 'o.db')}`, '--config', config(replica)];
  let a = await spawnServer(args('a'));
  const b = await spawnServer(args('b'));
  const producer: MqttClient = await connectAsync(BROKER, { protocolVersion: 5, clientId: `${run}-producer` });
  try {
    await Promise.all([subscribed(a), subscribed(b)]);
    const s = recordedStream();
    const at = async (line: string) => {
      const e = JSON.parse(line) as { device_id: string; boot_id: string; sequence: number };
      const d = (await (await fetch(`${b.url}/v1/devices/acme/${e.device_id}`)).json()) as { boot_id?: string; sequence?: number };
      return d.boot_id === e.boot_id && d.sequence === e.sequence;
    };
    let killed = 0;
    for (const [i, round] of s.rounds.entries()) {
      for (const line of round) await producer.publishAsync(`${run}/devices/${JSON.parse(line).device_id}`, line, { qos: 1 });
      if (i === 10 || i === 25) {
        // Mid-round: the replica has messages taken and not yet acknowledged.
        assert.equal(await a.stop('SIGKILL'), null);
        killed++;
        a = await spawnServer(args('a'));
        await subscribed(a);
      }
      await until(
        async () => (await Promise.all(round.map(at))).every(Boolean),
        30_000,
        () => `round ${i} not applied`,
      );
    }
    assert.equal(killed, 2);
    for (const [device, want] of s.expected) {
      const d = (await (await fetch(`${a.url}/v1/devices/acme/${device}`)).json()) as Record<string, unknown>;
      assert.deepEqual({ boot: d.boot_id, sequence: d.sequence, state: d.state }, want, device);
    }
    console.log(`replica B took ${await taken(b, 'decided')} messages; the restarted A ${await taken(a, 'decided')}`);
  } finally {
    await producer.endAsync();
    await Promise.all([a.stop(), b.stop()]);
    dir.remove();
  }
});
