/**
 * Ingestion from NATS JetStream against HTTP batches, on the same server and
 * store in the same run: decisions/s of the bench's incident mix taken from a
 * stream by one replica, next to the same mix posted as NDJSON batches.
 */
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { startRedis } from '../../test/helpers/redis.js';
import { tempDir } from '../../test/helpers/tmp.js';
import { wrk } from '../http/wrk.js';
import { int, ratio, table, targetAtLeast, x, type Section } from '../report.js';
import { serveOnceonly } from './http.js';

const BATCH = fileURLToPath(new URL('../http/batch.lua', import.meta.url));
const SECONDS = Number(process.env.HTTP_SECONDS ?? 10);
const MESSAGES = Number(process.env.NATS_MESSAGES ?? 20_000);
const NATS = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';

/** The bench's mix (bench/http/mixline.lua), line for line: 50% new keys, 40% re-fires, 10% severity changes. */
function mix(prefix: string, n: number): string[] {
  const out: string[] = [];
  let made = 0;
  for (let counter = 1; counter <= n; counter++) {
    const r = Number((BigInt(counter) * 2654435761n) % 100n);
    let key: number;
    let severity = 'MAJOR';
    if (made === 0 || r < 50) key = ++made;
    else {
      key = ((counter * 7919) % made) + 1;
      if (r >= 90) severity = 'CRITICAL';
    }
    out.push(`{"element_id":"${prefix}-${key}","fault_class":"LINK_DOWN","root_cause_id":"rc-4411","severity":"${severity}","summary":"link down"}`);
  }
  return out;
}

export async function ingestSection(log: (s: string) => void): Promise<Section> {
  const dir = tempDir('onceonly-bench-ingest-');
  const redis = await startRedis();
  const nc = await connect({ servers: NATS });
  const jsm = await jetstreamManager(nc);
  const js = jetstream(nc);
  const rows: Array<{ store: string; nats: number; batch: number }> = [];
  try {
    for (const [name, store] of [
      ['sqlite', `sqlite:${dir.path}/onceonly.db`],
      ['redis', redis.url],
    ] as const) {
      const run = `b${randomBytes(4).toString('hex')}`;
      const stream = `OO_BENCH_${run}`;
      const srv = await serveOnceonly(
        store,
        dir.path,
        `ingest-${name}`,
        [],
        `ingest:\n  nats:\n    url: ${NATS}\n    stream: ${stream}\n    subjects: { "${run}.faults": incident }\n`,
      );
      try {
        // The server made the stream and its consumer; the messages are published first, then taken as a backlog.
        const ready = Date.now() + 20_000;
        while (!(await jsm.consumers.info(stream, 'onceonly').catch(() => null))) {
          if (Date.now() > ready) throw new Error(`the server did not make the stream ${stream}`);
          await new Promise((r) => setTimeout(r, 100));
        }
        log(`ingest: ${MESSAGES} messages through NATS on ${name}`);
        const lines = mix(run, MESSAGES);
        const started = Date.now();
        for (let i = 0; i < lines.length; i += 512) await Promise.all(lines.slice(i, i + 512).map((l) => js.publish(`${run}.faults`, l)));
        for (;;) {
          const c = await jsm.consumers.info(stream, 'onceonly');
          if (c.num_pending === 0 && c.num_ack_pending === 0) break;
          await new Promise((r) => setTimeout(r, 50));
        }
        const nats = MESSAGES / ((Date.now() - started) / 1000);
        log(`ingest: 1000-line HTTP batches on ${name}, ${SECONDS} s`);
        const batch = wrk(srv.url, BATCH, SECONDS, [`batch-${run}`, '1000'], { connections: 8, timeoutS: 60 });
        rows.push({ store: name, nats, batch: batch.rps * 1000 });
      } finally {
        await srv.stop();
        await jsm.streams.delete(stream).catch(() => undefined);
      }
    }
  } finally {
    await nc.close();
    await redis.stop();
    dir.remove();
  }
  return {
    title: 'Ingestion from NATS JetStream',
    body: [
      `${int(MESSAGES)} messages of the bench's incident mix published to a stream, then taken by one replica through its durable pull consumer (batches of 100, each message decided, then acknowledged), timed from the first publish until the consumer has nothing pending or unacknowledged; then NDJSON batches of 1,000 lines of the same mix posted for ${SECONDS} s over 8 connections (bench/http/batch.lua) to the same server.`,
      table(
        ['store', 'NATS: decisions/s', 'HTTP batches of 1,000: decisions/s', 'NATS vs batches'],
        rows.map((r) => [r.store, int(r.nats), int(r.batch), x(ratio(r.nats, r.batch))]),
      ),
      "A replica decides up to `ingest.nats.concurrency` (64) messages at once, one incident's or device's in the order the stream hands them out; batches decide up to 64 lines at once. More replicas on the one consumer add their rates.",
    ],
    targets: rows.map((r) =>
      targetAtLeast(
        `NATS decisions/s vs HTTP batches of 1,000, ${r.store}`,
        ratio(r.nats, r.batch),
        1,
        "the NATS figure is timed from the first publish, so the publisher's 20,000 confirmed publishes are part of it; and each message is its own decision call, parse and acknowledgement (a publish), where a batch's lines share one request, one parse and the store's group commits or scripts",
      ),
    ),
  };
}
