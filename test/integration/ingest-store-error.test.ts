// needs: nats mosquitto
/**
 * A broker message whose decision the store itself fails (not a store that
 * is away, which makes the replica fail open and stop pulling) is taken
 * again, never acknowledged as done: the SQLite store's disk is full
 * (SQLite's own page cap stands in for the disk), the messages are decided
 * when space returns, and none is lost or counted as refused.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect as natsConnect } from '@nats-io/transport-node';
import { connectAsync as mqttConnect } from 'mqtt';
import { incidentKey } from '../../src/core/identity.js';
import type { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { inProcessServer, type InProcessServer } from '../helpers/server.js';
import { until } from '../helpers/wait.js';

const MESSAGES = 6;
// Large enough that each new incident needs new pages, which the full disk refuses.
const fault = (run: string, i: number) =>
  JSON.stringify({ element_id: `${run}-${i}`, fault_class: 'LOS', root_cause_id: 'cut', severity: 'MAJOR', details: { note: 'x'.repeat(8000) } });

/** How many of the run's faults are decided (live keys in the store). */
const live = (s: InProcessServer, run: string) => {
  const keys = Array.from({ length: MESSAGES }, (_, i) => incidentKey({ element_id: `${run}-${i}`, fault_class: 'LOS', root_cause_id: 'cut' }));
  const db = (s.store as SqliteStore).database;
  return (db.prepare(`SELECT count(*) AS n FROM incidents WHERE key IN (${keys.map(() => '?').join(',')})`).get(...keys) as { n: number }).n;
};
const metric = async (s: InProcessServer, re: RegExp) => Number(re.exec(await (await fetch(`${s.url}/metrics`)).text())?.[1] ?? 0);

/** Fills the disk: the file may not grow past the pages it has now. Returns the way back. */
function fillDisk(s: InProcessServer): () => void {
  const db = (s.store as SqliteStore).database;
  db.pragma(`max_page_count = ${db.pragma('page_count', { simple: true })}`);
  return () => db.pragma('max_page_count = 1073741823');
}

test("NATS: a decision the store fails is nak'd and decided once the store takes it again; nothing is lost", async (t) => {
  const run = `se${randomBytes(4).toString('hex')}`;
  const stream = `OO_${run}`;
  const nc = await natsConnect({ servers: 'nats://127.0.0.1:4222' });
  const s = await inProcessServer({
    store: 'sqlite',
    config: `ingest:\n  nats:\n    url: nats://127.0.0.1:4222\n    stream: ${stream}\n    subjects: { "${run}.faults": incident }\n    ack_wait_seconds: 3\n    nak_delay_ms: 200\n`,
  });
  t.after(async () => {
    await s.stop();
    await (await jetstreamManager(nc)).streams.delete(stream).catch(() => undefined);
    await nc.close();
  });
  await until(async () => (await metric(s, /^onceonly_ingest_nats_pending (\d+)/m)) >= 0 && (await fetch(`${s.url}/metrics`)).ok, 10_000);
  const restore = fillDisk(s);
  const js = jetstream(nc);
  for (let i = 0; i < MESSAGES; i++) await js.publish(`${run}.faults`, fault(run, i));
  await until(
    async () => (await metric(s, /^onceonly_ingest_nats_messages_total\{outcome="nakd"\} (\d+)/m)) >= 2 || null,
    20_000,
    () => 'the full store never failed a decision',
  );
  assert.ok(live(s, run) < MESSAGES, 'the full disk refused some decisions');
  restore();
  await until(
    () => live(s, run) === MESSAGES || null,
    30_000,
    () => `${live(s, run)} of ${MESSAGES} decided after space returned`,
  );
  assert.equal(await metric(s, /^onceonly_ingest_nats_messages_total\{outcome="rejected"\} (\d+)/m), 0, 'a store error is not a refusal');
});

test('MQTT: a decision the store fails is retried unacknowledged and decided once the store takes it again; nothing is lost', async (t) => {
  const run = `se${randomBytes(4).toString('hex')}`;
  const s = await inProcessServer({
    store: 'sqlite',
    config: `ingest:\n  mqtt:\n    url: mqtt://127.0.0.1:1883\n    topics: { "${run}/+": incident }\n    shared_group: ${run}\n    client_id: ${run}\n`,
  });
  const publisher = await mqttConnect('mqtt://127.0.0.1:1883', { protocolVersion: 5 });
  t.after(async () => {
    await publisher.endAsync();
    await s.stop();
  });
  await until(async () => (await metric(s, /^onceonly_ingest_mqtt_connected (\d+)/m)) === 1 || null, 10_000);
  // The subscription follows the connect: give it a moment before publishing.
  await new Promise((r) => setTimeout(r, 300));
  const restore = fillDisk(s);
  for (let i = 0; i < MESSAGES; i++) await publisher.publishAsync(`${run}/f`, fault(run, i), { qos: 1 });
  await until(
    async () => (await metric(s, /^onceonly_ingest_mqtt_messages_total\{outcome="retried"\} (\d+)/m)) >= 2 || null,
    20_000,
    () => 'the full store never failed a decision',
  );
  assert.ok(live(s, run) < MESSAGES, 'the full disk refused some decisions');
  restore();
  await until(
    () => live(s, run) === MESSAGES || null,
    30_000,
    () => `${live(s, run)} of ${MESSAGES} decided after space returned`,
  );
  assert.equal(await metric(s, /^onceonly_ingest_mqtt_messages_total\{outcome="rejected"\} (\d+)/m), 0, 'a store error is not a refusal');
});
