/**
 * Section: lease. What one lease pass of the delivery worker costs when one
 * key has a backlog: a group whose members change faster than its
 * destination answers leaves many deliveries of one key waiting behind its
 * oldest, and the lease walks past each of them to find other keys' heads.
 * On SQLite and Postgres, timed for a backlog of B deliveries of one key
 * beside 50 other keys, against the baseline of the same B deliveries spread
 * over B keys (nothing waits). `npm run bench -- lease`.
 */
import { performance } from 'node:perf_hooks';
import { join } from 'node:path';
import { manualClock } from '../../src/core/clock.js';
import type { DedupStore } from '../../src/store/contract/index.js';
import { openStore } from '../../src/store/open.js';
import { freshSchema } from '../../test/helpers/postgres.js';
import { tempDir } from '../../test/helpers/tmp.js';
import { int, table, type Section } from '../report.js';

const BACKLOGS = [250, 1000, 4000];
const PASSES = 20;
const OTHER_KEYS = 50;

/** Fills the outbox with `counts[k]` changes of key k, then fans them out to one adapter. */
async function fill(store: DedupStore, counts: number[]): Promise<void> {
  for (const [k, count] of counts.entries()) {
    for (let i = 0; i < count; i++) {
      await store.incidents.decide({
        tenant: 'bench',
        key: `dedup:${k}`,
        fingerprint: `${i % 2 ? 'MAJOR' : 'MINOR'}|0|${i}`,
        ttlMs: 3_600_000,
        outbox: { severity: 'MAJOR', summary: 's', data: {} },
      });
    }
  }
  while ((await store.deliveries.fanOut(['hook'], 500)) > 0);
}

/** Mean ms of a lease pass once the heads are leased: what every later pass pays while the backlog waits. */
async function leasePasses(store: DedupStore): Promise<number> {
  await store.deliveries.leaseDue('bench', 60_000, 100);
  const t = performance.now();
  for (let i = 0; i < PASSES; i++) await store.deliveries.leaseDue('bench', 60_000, 100);
  return (performance.now() - t) / PASSES;
}

type Opened = { store: DedupStore; done: () => Promise<void> };

async function measure(open: () => Promise<Opened>, backlog: number, spread: boolean): Promise<number> {
  const { store, done } = await open();
  try {
    await store.init?.();
    // Blocked: key 0 holds the backlog, the other keys one each. Spread: as many deliveries, one a key.
    await fill(store, spread ? Array.from({ length: backlog + OTHER_KEYS }, () => 1) : [backlog, ...Array.from({ length: OTHER_KEYS }, () => 1)]);
    return await leasePasses(store);
  } finally {
    await store.close();
    await done();
  }
}

export async function leaseSection(log: (s: string) => void): Promise<Section> {
  const dir = tempDir();
  let n = 0;
  const clock = () => manualClock(Date.now());
  const backends: Array<[string, () => Promise<Opened>]> = [
    ['SQLite', async () => ({ store: openStore(`sqlite:${join(dir.path, `lease-${++n}.db`)}`, clock()), done: async () => {} })],
    [
      'Postgres',
      async () => {
        const pg = await freshSchema();
        return { store: pg.open(clock()), done: pg.drop };
      },
    ],
  ];
  const rows: Array<Array<string | number>> = [];
  try {
    for (const [name, open] of backends) {
      for (const b of BACKLOGS) {
        const blocked = await measure(open, b, false);
        const spread = await measure(open, b, true);
        log(`lease ${name} backlog ${b}: ${blocked.toFixed(2)} ms a pass, spread ${spread.toFixed(2)} ms`);
        rows.push([name, int(b), blocked.toFixed(2), spread.toFixed(2), (blocked / spread).toFixed(1)]);
      }
    }
  } finally {
    dir.remove();
  }
  return {
    title: 'A lease pass beside one key’s backlog',
    body: [
      `A lease pass (limit 100) after the heads are leased, mean of ${PASSES}: the backlog of one key waits behind its oldest delivery, beside ${OTHER_KEYS} other keys; the baseline spreads the same deliveries over as many keys.`,
      table(['store', 'backlog of one key', 'ms a pass', 'ms, spread over keys', 'ratio'], rows),
    ],
    targets: [],
  };
}
