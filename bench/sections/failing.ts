/**
 * Section: failing. What a receiver that is down costs everyone else's
 * decisions: re-fires of live keys, in-process, on a store that holds no
 * failing delivery and on one that holds FAILING_ROWS of other keys (their
 * adapter answered 503, each retrying in ten minutes). Every re-fire
 * re-queues its own key's failing deliveries in its step, so that step must
 * find them without reading the others'. Memory and SQLite (the stores
 * `npm start` and a single replica run). `npm run bench -- failing`.
 */
import type { DedupStore } from '../../src/store/contract/index.js';
import { memoryBackend } from '../backends/memory.js';
import { sqliteBackend } from '../backends/sqlite.js';
import { OUTBOX, TENANT, TTL_MS, type Backend } from '../backends/backend.js';
import { concurrent } from '../workload.js';
import { int, table, type Section } from '../report.js';

const FAILING_ROWS = Number(process.env.FAILING_ROWS ?? 20_000);
const LIVE = 2_000;
const ROUNDS = 5;

/** One arrival of `key`, unchanged: a create the first time, a re-fire after. */
const arrival = (store: DedupStore) => (key: string) =>
  store.incidents.decide({ tenant: TENANT, key, fingerprint: 'MAJOR|false', ttlMs: TTL_MS, outbox: OUTBOX });

/** Makes `n` deliveries of other keys fail once (a 503, retried in ten minutes). */
async function failing(store: DedupStore, n: number): Promise<void> {
  await concurrent(
    arrival(store),
    Array.from({ length: n }, (_, i) => `down-${i}`),
    64,
  );
  while ((await store.deliveries.fanOut(['snow'], 1000)) > 0);
  for (;;) {
    const leased = await store.deliveries.leaseDue('bench', 60_000, 1000);
    if (leased.length === 0) break;
    for (const d of leased) await store.deliveries.settle(d, { outcome: 'retry', delayMs: 600_000, error: 'HTTP 503' });
  }
}

/** Re-fires/s of LIVE live keys, the best of ROUNDS rounds. */
async function refires(b: Backend, tag: string): Promise<number> {
  const keys = Array.from({ length: LIVE }, (_, i) => `${tag}-live-${i}`);
  const arrive = arrival(b.store);
  await concurrent(arrive, keys, b.inflight);
  let best = 0;
  for (let r = 0; r < ROUNDS; r++) {
    const t = performance.now();
    await concurrent(arrive, keys, b.inflight);
    best = Math.max(best, LIVE / ((performance.now() - t) / 1000));
  }
  return best;
}

export async function failingSection(log: (s: string) => void): Promise<Section> {
  const rows: string[][] = [];
  for (const open of [memoryBackend, sqliteBackend]) {
    const b = await open();
    try {
      // One not counted first: the first decisions of a process run colder code.
      await refires(b, 'warm');
      const quiet = await refires(b, 'quiet');
      await failing(b.store, FAILING_ROWS);
      const backlog = await b.store.deliveries.backlog();
      const down = await refires(b, 'down');
      log(`failing on ${b.name}: ${int(quiet)} re-fires/s with none failing, ${int(down)} beside ${int(backlog.pending)} failing`);
      rows.push([b.name, int(quiet), int(backlog.pending), int(down), `${((down / quiet) * 100).toFixed(0)}%`]);
    } finally {
      await b.close();
    }
  }
  return {
    title: 'Re-fires beside a receiver that is down',
    body: [
      `In-process re-fires of ${int(LIVE)} live keys (the best of ${ROUNDS} rounds, each store's own concurrency), on a store with no failing delivery and then beside about ${int(FAILING_ROWS)} deliveries of other keys that failed once (HTTP 503, retrying in ten minutes; the earlier rounds' keys' own deliveries fail with them). Each re-fire re-queues its own key's failing deliveries in its step.`,
      table(['store', 're-fires/s, none failing', 'deliveries failing then', 're-fires/s beside them', 'kept'], rows),
    ],
    targets: [],
  };
}
