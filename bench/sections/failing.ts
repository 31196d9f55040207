/**
 * Section: failing. What a receiver that is down costs everyone else's
 * decisions: re-fires of live keys, in-process, on a store that holds no
 * failing delivery and on one that holds FAILING_ROWS of other keys (their
 * adapter answered 503, each retrying in ten minutes). Every re-fire
 * re-queues its own key's failing deliveries in its step, so that step must
 * find them without reading the others'. Then the receiver back: a
 * backlog drained as the worker drains it (lease, fold, settle), at two
 * sizes, so a cost per delivery that grows with the backlog shows. Memory
 * and SQLite (the stores `npm start`, `onceonly simulate` and a single
 * replica run). `npm run bench -- failing`.
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
/** Backlogs drained, small and four times as large. */
const DRAIN = [2_000, 8_000] as const;

/** One arrival of `key`, unchanged: a create the first time, a re-fire after. */
const arrival = (store: DedupStore) => (key: string) =>
  store.incidents.decide({ tenant: TENANT, key, fingerprint: 'MAJOR|false', ttlMs: TTL_MS, outbox: OUTBOX });

/** One pending delivery to `snow` for each of `n` new keys named `prefix-i`. */
async function queued(store: DedupStore, n: number, prefix: string): Promise<void> {
  await concurrent(
    arrival(store),
    Array.from({ length: n }, (_, i) => `${prefix}-${i}`),
    64,
  );
  while ((await store.deliveries.fanOut(['snow'], 1000)) > 0);
}

/** Makes `n` deliveries of other keys fail once (a 503, retried in ten minutes). */
async function failing(store: DedupStore, n: number): Promise<void> {
  await queued(store, n, 'down');
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

/** µs per delivery to drain `n` pending deliveries of `n` keys, as the worker does: lease 100, fold each, settle delivered. */
async function drain(open: () => Promise<Backend>, n: number): Promise<{ name: string; us: number }> {
  const b = await open();
  try {
    await queued(b.store, n, 'backlog');
    const t = performance.now();
    let done = 0;
    for (let due = await b.store.deliveries.leaseDue('bench', 60_000, 100); due.length > 0; due = await b.store.deliveries.leaseDue('bench', 60_000, 100)) {
      for (const d of due) {
        const f = await b.store.deliveries.fold(d, null);
        if (f.kind === 'ready' && (await b.store.deliveries.settle(f.delivery, { outcome: 'delivered' }))) done++;
      }
    }
    if (done !== n) throw new Error(`drained ${done} of ${n} deliveries on ${b.name}`);
    return { name: b.name, us: ((performance.now() - t) * 1000) / n };
  } finally {
    await b.close();
  }
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
  const drains: string[][] = [];
  for (const open of [memoryBackend, sqliteBackend]) {
    const small = await drain(open, DRAIN[0]);
    const large = await drain(open, DRAIN[1]);
    log(`drain on ${small.name}: ${small.us.toFixed(1)} µs a delivery of ${int(DRAIN[0])}, ${large.us.toFixed(1)} of ${int(DRAIN[1])}`);
    drains.push([small.name, small.us.toFixed(1), large.us.toFixed(1), `${(large.us / small.us).toFixed(2)}×`]);
  }
  return {
    title: 'Re-fires beside a receiver that is down',
    body: [
      `In-process re-fires of ${int(LIVE)} live keys (the best of ${ROUNDS} rounds, each store's own concurrency), on a store with no failing delivery and then beside about ${int(FAILING_ROWS)} deliveries of other keys that failed once (HTTP 503, retrying in ten minutes; the earlier rounds' keys' own deliveries fail with them). Each re-fire re-queues its own key's failing deliveries in its step.`,
      table(['store', 're-fires/s, none failing', 'deliveries failing then', 're-fires/s beside them', 'kept'], rows),
      `The receiver back: a backlog of one pending delivery per key drained as the worker drains it (lease 100, fold each, settle it delivered), ${int(DRAIN[0])} and then ${int(DRAIN[1])} of them, each on a fresh store. A cost per delivery that stays flat as the backlog grows fourfold is linear; one that grows about fourfold is a pass over the backlog per delivery.`,
      table(['store', `µs a delivery, ${int(DRAIN[0])}`, `µs a delivery, ${int(DRAIN[1])}`, 'growth'], drains),
    ],
    targets: [],
  };
}
