// needs: nats redis
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { startSink } from '../fakes/http-fake.js';
import { spawnServer, type ServerProcess } from '../helpers/process.js';
import { startRedis } from '../helpers/redis.js';
import { tempDir } from '../helpers/tmp.js';
import { until } from '../helpers/wait.js';

const NATS = 'nats://127.0.0.1:4222';

/** A replica's value of a metric line (0 when absent). */
async function metric(s: ServerProcess, line: RegExp): Promise<number> {
  return Number(line.exec(await (await fetch(`${s.url}/metrics`)).text())?.[1] ?? 0);
}
const acked = (s: ServerProcess) => metric(s, /^onceonly_ingest_nats_messages_total\{outcome="acked"\} (\d+)/m);

/** A run of its own: a stream, a Redis, a webhook receiver, a NATS connection, and a replica config for them (each replica its own journal). */
async function setUp() {
  const run = `t${randomBytes(4).toString('hex')}`;
  const stream = `OO_${run}`;
  const dir = tempDir();
  const redis = await startRedis();
  const hook = await startSink(200, {});
  const nc = await connect({ servers: NATS });
  const config = (replica: string) => {
    const file = join(dir.path, `${replica}.yaml`);
    writeFileSync(
      file,
      `failopen: { timeout_ms: 200, journal_path: ${JSON.stringify(join(dir.path, `${replica}-journal.db`))} }\n` +
        `adapters: [ { name: hook, type: webhook, url: "${hook.url}/in" } ]\n` +
        `ingest:\n  nats:\n    url: ${NATS}\n    stream: ${stream}\n    subjects: { "${run}.faults": incident }\n` +
        `    ack_wait_seconds: 3\n    nak_delay_ms: 200\n    reject_subject: ${run}.rejected\n`,
    );
    return ['--port', '0', '--store', redis.url, '--config', file];
  };
  return {
    run,
    stream,
    redis,
    hook,
    nc,
    config,
    async close() {
      await (await jetstreamManager(nc)).streams.delete(stream).catch(() => undefined);
      await nc.close();
      await hook.close();
      await redis.stop();
      dir.remove();
    },
  };
}
const pulling = (s: ServerProcess) =>
  until(
    () => s.lines.some((l) => l.includes('NATS ingest pulling')),
    20_000,
    () => s.stderr(),
  );
const fault = (run: string, i: number) => JSON.stringify({ element_id: `olt-${i}`, fault_class: 'LOS', root_cause_id: `${run}-cut-${i}`, severity: 'MAJOR' });

/** Publishes to JetStream, `width` at a time, each confirmed by the stream. */
async function publishAll(nc: NatsConnection, subject: string, bodies: string[], width = 256): Promise<void> {
  const js = jetstream(nc);
  for (let i = 0; i < bodies.length; i += width) await Promise.all(bodies.slice(i, i + width).map((b) => js.publish(subject, b)));
}

/** The consumer's messages not yet handed out, and handed out and not acknowledged. */
async function outstanding(nc: NatsConnection, stream: string): Promise<{ pending: number; unacked: number; ackFloor: number; last: number }> {
  const jsm = await jetstreamManager(nc);
  const [c, s] = await Promise.all([jsm.consumers.info(stream, 'onceonly'), jsm.streams.info(stream)]);
  return { pending: c.num_pending, unacked: c.num_ack_pending, ackFloor: c.ack_floor.stream_seq, last: s.state.last_seq };
}

// 10,000 faults, each published 5 times (50,000 messages), and 50 that are not valid input, through
// one durable consumer two replicas pull from; one replica is killed (SIGKILL) mid-stream, and what
// it had taken and not acknowledged is handed to the other after ack_wait. Every message ends
// acknowledged, each fault makes one create at the receiver, and the 50 reach the reject subject.
test('NATS JetStream, two replicas, one killed mid-stream: 50,000 messages, one create per fault, nothing left pending', async () => {
  const { run, stream, hook, nc, config, close } = await setUp();
  const a = await spawnServer(config('a'));
  const b = await spawnServer(config('b'));
  try {
    await Promise.all([pulling(a), pulling(b)]);
    const rejects = new Set<string>();
    const sub = nc.subscribe(`${run}.rejected`, { callback: (_e, m) => void rejects.add(m.string()) });
    const KEYS = 10_000;
    const bodies = Array.from({ length: 5 }, () => Array.from({ length: KEYS }, (_, i) => fault(run, i))).flat();
    const bad = Array.from({ length: 50 }, (_, i) => `{"element_id": ${i}}`);
    const started = Date.now();
    const publishing = publishAll(nc, `${run}.faults`, [...bodies, ...bad]);
    await until(
      async () => (await acked(a)) >= 5_000,
      120_000,
      () => 'replica A decided too little',
    );
    assert.equal(await a.stop('SIGKILL'), null);
    await publishing;
    const done = await until(
      async () => {
        const o = await outstanding(nc, stream);
        return o.pending === 0 && o.unacked === 0 && o.ackFloor === o.last ? o : null;
      },
      300_000,
      () => 'messages still pending',
    );
    const seconds = (Date.now() - started) / 1000;
    assert.equal(done.last, 50_050, 'the stream holds what was published');
    // Deliveries go out after the decisions: wait for a create of every fault.
    const creates = () => hook.requests.filter((r) => r.body.action === 'create');
    await until(
      () => new Set(creates().map((r) => r.body.key)).size === KEYS,
      120_000,
      () => `${new Set(creates().map((r) => r.body.key)).size} faults created`,
    );
    await new Promise((r) => setTimeout(r, 1000));
    console.log(
      `${done.last} messages in ${seconds.toFixed(1)} s (${Math.round(done.last / seconds)}/s); replica B acked ${await acked(b)}, failed open ${await metric(b, /^onceonly_store_degradations_total (\d+)/m)} times; create requests ${creates().length} for ${KEYS} faults; rejects ${rejects.size}`,
    );
    // A delivery retried (the killed replica's, taken over) carries the same Idempotency-Key: the receiver's upsert.
    const perKey = new Map<string, Set<string>>();
    for (const r of creates()) perKey.set(r.body.key, (perKey.get(r.body.key) ?? new Set()).add(String(r.headers['idempotency-key'])));
    assert.deepEqual(
      [...perKey.values()].filter((k) => k.size !== 1),
      [],
      'one create per fault, none decided twice',
    );
    await until(
      () => rejects.size === 50,
      10_000,
      () => `${rejects.size} of 50 rejects`,
    );
    assert.deepEqual([...rejects].sort(), [...bad].sort());
    sub.unsubscribe();
    // received = decided + rejected, from what was published: the store counts each fault's decisions (its
    // CREATE and its re-fires), so every one of the five copies was decided, on whichever replica; a message
    // handed out again after the kill is one decision more, never one fewer.
    let decided = 0;
    for (const key of perKey.keys()) {
      const shown = (await (await fetch(`${b.url}/v1/incidents/${encodeURIComponent(key)}`)).json()) as { refires: number; updates: number };
      assert.ok(shown.refires >= 4, `${key}: ${shown.refires + 1} decisions of 5 copies`);
      decided += 1 + shown.refires + shown.updates;
    }
    console.log(`published ${done.last}: decided ${decided} (${decided - bodies.length} handed out again after the kill), rejected ${rejects.size}`);
    assert.ok(decided >= bodies.length && decided + rejects.size >= done.last);
  } finally {
    await a.stop('SIGKILL');
    await b.stop();
    await close();
  }
});

// The store goes away: the replica fails open, stops pulling, and the stream keeps what it cannot
// take; once the store is back, every message is decided, each fault created once.
test('NATS JetStream during a store outage: the replica stops pulling, the stream keeps the messages, nothing is lost', async () => {
  const { run, stream, redis, hook, nc, config, close } = await setUp();
  const s = await spawnServer(config('a'));
  try {
    await pulling(s);
    await redis.kill('SIGKILL');
    // One message finds the store gone: decided in the journal, and the replica fails open.
    await publishAll(nc, `${run}.faults`, [fault(run, 9999)]);
    await until(
      async () => (await metric(s, /^onceonly_ingest_nats_paused (\d+)/m)) === 1,
      30_000,
      () => 'the replica never paused',
    );
    await publishAll(nc, `${run}.faults`, Array.from({ length: 5 }, () => Array.from({ length: 100 }, (_, i) => fault(run, i))).flat());
    await new Promise((r) => setTimeout(r, 1500));
    const held = await outstanding(nc, stream);
    assert.ok(held.pending + held.unacked >= 490, `the stream keeps what the store cannot take: ${JSON.stringify(held)}`);
    await redis.restart();
    await until(
      async () => {
        const o = await outstanding(nc, stream);
        return o.pending === 0 && o.unacked === 0 && o.ackFloor === o.last;
      },
      120_000,
      () => 'messages still pending after the store came back',
    );
    const creates = () => hook.requests.filter((r) => r.body.action === 'create');
    await until(
      () => new Set(creates().map((r) => r.body.key)).size === 101,
      60_000,
      () => `${creates().length} creates`,
    );
    await new Promise((r) => setTimeout(r, 1000));
    assert.equal(creates().length, 101, 'one create per fault');
    assert.equal(await metric(s, /^onceonly_ingest_nats_paused (\d+)/m), 0);
  } finally {
    await s.stop('SIGKILL');
    await close();
  }
});
