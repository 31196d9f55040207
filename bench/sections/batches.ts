/**
 * Batches over HTTP: decisions/s when a producer sends NDJSON batches of
 * 1,000 lines, against single requests with the same mix on the same store,
 * measured in the same run.
 */
import { fileURLToPath } from 'node:url';
import { startRedis } from '../../test/helpers/redis.js';
import { tempDir } from '../../test/helpers/tmp.js';
import { wrk } from '../http/wrk.js';
import { int, ratio, table, targetAtLeast, x, type Section } from '../report.js';
import { servedStores, serveOnceonly } from './http.js';

const MIX = fileURLToPath(new URL('../http/mix.lua', import.meta.url));
const BATCH = fileURLToPath(new URL('../http/batch.lua', import.meta.url));
const SECONDS = Number(process.env.HTTP_SECONDS ?? 10);
const LINES = 1000;
/**
 * A producer replaying a backlog sends batches over a few connections, not
 * 64: 64 connections of 1,000 lines put 64,000 lines in flight at once, and
 * with wrk's 2 s timeout the slowest batches were counted as failures. Eight
 * connections, a 60 s timeout.
 */
const BATCH_CONNECTIONS = 8;

export async function batchesSection(log: (s: string) => void): Promise<Section> {
  const dir = tempDir('onceonly-bench-batch-');
  const redis = await startRedis();
  const rows: Array<{ store: string; single: number; batch: number; errors: number }> = [];
  try {
    for (const [name, store] of servedStores(dir.path, redis.url)) {
      const srv = await serveOnceonly(store, dir.path, `batch-${name}`);
      try {
        log(`batches: single requests on ${name}, ${SECONDS} s`);
        const single = wrk(srv.url, MIX, SECONDS, [`single-${name}`]);
        log(`batches: ${LINES}-line batches on ${name}, ${SECONDS} s`);
        const batch = wrk(srv.url, BATCH, SECONDS, [`batch-${name}`, String(LINES)], { connections: BATCH_CONNECTIONS, timeoutS: 60 });
        rows.push({ store: name, single: single.rps, batch: batch.rps * LINES, errors: single.errors + batch.errors });
      } finally {
        await srv.stop();
      }
    }
  } finally {
    await redis.stop();
    dir.remove();
  }
  const errors = rows.reduce((s, r) => s + r.errors, 0);
  return {
    title: 'Batches over HTTP',
    body: [
      `\`wrk -t1 -d${SECONDS}s\` against \`POST /v1/incidents\`: single JSON requests over 64 connections (bench/http/mix.lua), then NDJSON batches of ${LINES} lines with the same mix over ${BATCH_CONNECTIONS} connections with a 60 s timeout (bench/http/batch.lua), on the same server. Decisions/s of a batch run are requests/s × ${LINES}. Lines of a batch are decided up to 64 at once, in line order per key.`,
      table(
        ['store', 'single requests: decisions/s', `batches of ${LINES}: decisions/s`, 'batch vs single'],
        rows.map((r) => [r.store, int(r.single), int(r.batch), x(ratio(r.batch, r.single))]),
      ),
      ...(errors ? [`**${errors} requests failed**: the figures above are not clean.`] : []),
    ],
    targets: rows.map((r) =>
      targetAtLeast(
        `batch decisions/s vs single requests, ${r.store}`,
        ratio(r.batch, r.single),
        // Memory has no store round trip to share, so a batch saves only the HTTP per line: the goal is the higher.
        r.store === 'memory' ? 5 : 3,
        r.store === 'redis'
          ? 'the lines in flight are decided together (one decide-incidents call per turn of the event loop), so a batch saves the HTTP and parsing per line and part of the per-call cost; the decision script per key remains'
          : 'the lines in flight share group-commit transactions, so a batch saves the HTTP and parsing per line; each line is still its own decision with its own savepoint, and the delivery worker writes to the same file',
      ),
    ),
  };
}
