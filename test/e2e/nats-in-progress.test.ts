// needs: nats postgres
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import pg from 'pg';
import { incidentKey } from '../../src/core/identity.js';
import { keyLock } from '../../src/store/postgres/pg-db.js';
import { startSink } from '../fakes/http-fake.js';
import { spawnServer } from '../helpers/process.js';
import { dropSchema, PG_URL } from '../helpers/postgres.js';
import { tempDir } from '../helpers/tmp.js';
import { until } from '../helpers/wait.js';

const NATS = 'nats://127.0.0.1:4222';

/**
 * A decision that takes longer than the consumer's ack_wait (here: its key's
 * lock held by another session for 3.5 s, against an ack_wait of 1 s) tells
 * JetStream it is still at work. Without the in-progress acks the server
 * hands the message out again every second, and the replica decides it again.
 */
test('NATS: a decision longer than ack_wait sends in-progress acks, so the message is handed out once and decided once', async () => {
  const run = `t${randomBytes(4).toString('hex')}`;
  const stream = `OO_${run}`;
  const schema = `oo_nats_wip_${run}`;
  const dir = tempDir();
  const hook = await startSink(200, {});
  const nc = await connect({ servers: NATS });
  const holder = new pg.Client({ connectionString: PG_URL });
  await holder.connect();
  const file = join(dir.path, 'replica.yaml');
  writeFileSync(
    file,
    // A fail-open deadline past the lock's hold: the decision waits for the store instead of going provisional.
    `failopen: { timeout_ms: 20000, journal_path: ${JSON.stringify(join(dir.path, 'journal.db'))} }\n` +
      `adapters: [ { name: hook, type: webhook, url: "${hook.url}/in" } ]\n` +
      `ingest:\n  nats:\n    url: ${NATS}\n    stream: ${stream}\n    subjects: { "${run}.faults": incident }\n` +
      '    ack_wait_seconds: 1\n    nak_delay_ms: 200\n',
  );
  const url = new URL(PG_URL);
  url.searchParams.set('schema', schema);
  const replica = await spawnServer(['--port', '0', '--store', url.toString(), '--config', file]);
  const metric = async (re: RegExp) => Number(re.exec(await (await fetch(`${replica.url}/metrics`)).text())?.[1] ?? 0);
  try {
    await until(
      () => replica.lines.some((l) => l.includes('NATS ingest pulling')),
      20_000,
      () => replica.stderr(),
    );
    const fault = { element_id: 'olt-1', fault_class: 'LOS', root_cause_id: `${run}-cut`, severity: 'MAJOR' };
    // The decision takes this lock first (one key's operations run one at a time across replicas).
    await holder.query('SELECT pg_advisory_lock(hashtextextended($1, 0))', [keyLock('default', incidentKey(fault))]);
    const started = Date.now();
    await jetstream(nc).publish(`${run}.faults`, JSON.stringify(fault));
    await until(
      async () => (await metric(/^onceonly_ingest_nats_messages_total\{outcome="consumed"\} (\d+)/m)) >= 1 || null,
      10_000,
      () => 'not consumed',
    );
    await new Promise((r) => setTimeout(r, 3500));
    await holder.query('SELECT pg_advisory_unlock_all()');
    await until(
      async () => (await metric(/^onceonly_ingest_nats_messages_total\{outcome="acked"\} (\d+)/m)) >= 1 || null,
      15_000,
      () => 'never acked',
    );
    const held = Date.now() - started;
    const info = await (await jetstreamManager(nc)).consumers.info(stream, 'onceonly');
    const consumed = await metric(/^onceonly_ingest_nats_messages_total\{outcome="consumed"\} (\d+)/m);
    console.log(`decision held ${held} ms against an ack_wait of 1000 ms: consumed ${consumed}, redelivered ${info.num_redelivered}`);
    assert.ok(held > 3000, 'the decision really outlasted ack_wait three times over');
    assert.equal(info.num_redelivered, 0, 'JetStream never handed the message out again');
    assert.equal(consumed, 1, 'the replica took it once');
    assert.equal(info.num_ack_pending, 0);
    await until(
      () => hook.requests.length >= 1 || null,
      10_000,
      () => 'no create reached the receiver',
    );
    assert.deepEqual(
      hook.requests.map((r) => r.body.action),
      ['create'],
    );
  } finally {
    await holder.end();
    await replica.stop('SIGTERM');
    await (await jetstreamManager(nc)).streams.delete(stream).catch(() => undefined);
    await nc.close();
    await hook.close();
    await dropSchema(schema);
    dir.remove();
  }
});
