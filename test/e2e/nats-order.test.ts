// needs: nats postgres
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { incidentKey } from '../../src/core/identity.js';
import { spawnServer } from '../helpers/process.js';
import { dropSchema, PG_URL } from '../helpers/postgres.js';
import { seededRandom, testSeed } from '../helpers/seed.js';
import { tempDir } from '../helpers/tmp.js';
import { until } from '../helpers/wait.js';

const NATS = 'nats://127.0.0.1:4222';
const SEVERITIES = ['CRITICAL', 'MAJOR', 'MINOR', 'INFO'];

/**
 * Many messages decided at once, one incident's in the order published: 40
 * incidents, each changing severity 15 times, their messages interleaved at
 * random and published in one burst. Every change is a new severity, so each
 * message is a decision of its own, and a key's history must read its
 * severities exactly as published (one decided out of order would show as
 * another sequence, or a SUPPRESS).
 */
test('NATS: messages decided side by side, and each incident’s in the order published', async () => {
  const seed = testSeed('e2e/nats-order');
  const random = seededRandom(seed);
  const run = `t${randomBytes(4).toString('hex')}`;
  const stream = `OO_${run}`;
  const dir = tempDir();
  const nc = await connect({ servers: NATS });
  const file = join(dir.path, 'replica.yaml');
  writeFileSync(
    file,
    `failopen: { timeout_ms: 5000, journal_path: ${JSON.stringify(join(dir.path, 'journal.db'))} }\nhistory: { max_events: 100 }\ningest:\n  nats:\n    url: ${NATS}\n    stream: ${stream}\n    subjects: { "${run}.faults": incident }\n    concurrency: 64\n`,
  );
  // Postgres: its pool runs decisions on several connections, so two of one key sent at once could commit either way.
  const schema = `oo_nats_order_${run}`;
  const store = new URL(PG_URL);
  store.searchParams.set('schema', schema);
  const s = await spawnServer(['--port', '0', '--store', store.toString(), '--config', file]);
  try {
    await until(
      () => s.lines.some((l) => l.includes('NATS ingest pulling')),
      20_000,
      () => s.stderr(),
    );
    const keys = 40;
    const changes = 15;
    const wanted = Array.from({ length: keys }, () => {
      const seq: string[] = [];
      for (let i = 0; i < changes; i++) {
        const others = SEVERITIES.filter((x) => x !== seq.at(-1));
        seq.push(others[Math.floor(random() * others.length)]!);
      }
      return seq;
    });
    // Interleave at random, each key's messages kept in its order.
    const next = new Array<number>(keys).fill(0);
    const bodies: string[] = [];
    while (bodies.length < keys * changes) {
      const k = Math.floor(random() * keys);
      if (next[k]! >= changes) continue;
      bodies.push(JSON.stringify({ element_id: `olt-${k}`, fault_class: 'LOS', root_cause_id: run, severity: wanted[k]![next[k]!++] }));
    }
    const js = jetstream(nc);
    // Published in order (each confirmed before the next is sent), so the stream holds them as listed.
    for (const b of bodies) await js.publish(`${run}.faults`, b);
    await until(
      async () => {
        const c = await (await jetstreamManager(nc)).consumers.info(stream, 'onceonly');
        return c.num_pending === 0 && c.num_ack_pending === 0;
      },
      60_000,
      () => 'messages still pending',
    );
    const metrics = await (await fetch(`${s.url}/metrics`)).text();
    const acked = Number(/^onceonly_ingest_nats_messages_total\{outcome="acked"\} (\d+)/m.exec(metrics)?.[1] ?? 0);
    assert.equal(acked, keys * changes, 'every message decided and acknowledged');
    for (let k = 0; k < keys; k++) {
      const key = incidentKey({ element_id: `olt-${k}`, fault_class: 'LOS', root_cause_id: run });
      let events: Array<{ type: string; decision?: string; severity?: string }> = [];
      await until(
        async () => {
          events = ((await (await fetch(`${s.url}/v1/incidents/${key}/history`)).json()) as { events: typeof events }).events;
          return events.filter((e) => e.type === 'decision').length >= changes || null;
        },
        10_000,
        () => `olt-${k}: ${JSON.stringify(events).slice(0, 300)}`,
      );
      const decided = events.filter((e) => e.type === 'decision');
      assert.deepEqual(
        decided.map((e) => `${e.decision} ${e.severity}`),
        wanted[k]!.map((sev, i) => `${i === 0 ? 'CREATE' : 'UPDATE'} ${sev}`),
        `olt-${k} decided in the order published (seed ${seed})`,
      );
    }
  } finally {
    await s.stop('SIGTERM');
    await (await jetstreamManager(nc)).streams.delete(stream).catch(() => undefined);
    await nc.close();
    await dropSchema(schema);
    dir.remove();
  }
});
