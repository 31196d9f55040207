/**
 * `npm run nemesis -- [--runs N] [--seed S] [--store redis|postgres|both] [--menu V] [--shrink-minutes M]`
 *
 * Runs N seeded schedules per store (seeds S, S+1, …; S defaults to the
 * clock), prints each seed's summary, and on a failure the seed, the
 * schedule shrunk while it still fails, and what broke. Exits 1 if any
 * schedule failed. A failing seed belongs in test/chaos/nemesis-seeds.json
 * (with the menu it was drawn from, `--menu`, the newest by default),
 * which `npm test` replays on every run.
 */
import { parseArgs } from 'node:util';
import { report, runSchedule, shrink } from './run.js';
import { describeSchedule, drawSchedule, MENU, type StoreKind } from './schedule.js';

// The nemesis restarts its Redis empty on purpose: the replicas are told they may lose data (and must say so).
process.env.ONCEONLY_REDIS_ACCEPT_DATA_LOSS ??= '1';

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '5' },
    seed: { type: 'string' },
    store: { type: 'string', default: 'both' },
    menu: { type: 'string', default: String(MENU) },
    'shrink-minutes': { type: 'string', default: '10' },
  },
});
const runs = Number(values.runs);
const first = values.seed !== undefined ? Number(values.seed) : Date.now() % 2 ** 31;
if (!Number.isInteger(runs) || runs < 1) throw new Error(`--runs must be a whole number of at least 1, not ${JSON.stringify(values.runs)}`);
if (!Number.isInteger(first) || first < 0) throw new Error(`--seed must be a whole number, not ${JSON.stringify(values.seed)}`);
const menu = Number(values.menu);
if (!Number.isInteger(menu) || menu < 1 || menu > MENU) throw new Error(`--menu must be 1 to ${MENU}, not ${JSON.stringify(values.menu)}`);
const stores: StoreKind[] = values.store === 'both' ? ['redis', 'postgres'] : [values.store as StoreKind];
if (stores.some((s) => s !== 'redis' && s !== 'postgres')) throw new Error(`--store must be redis, postgres or both, not ${JSON.stringify(values.store)}`);

const started = Date.now();
const failed: number[] = [];
const back: number[] = [];
let done = 0;
for (let i = 0; i < runs; i++) {
  for (const store of stores) {
    const seed = first + i;
    const t = Date.now();
    const schedule = drawSchedule(seed, store, menu);
    let o: Awaited<ReturnType<typeof runSchedule>>;
    try {
      o = await runSchedule(schedule);
    } catch (err) {
      // The harness itself broke (a replica that would not stop, a fault that could not be made): a failure too.
      done++;
      failed.push(seed);
      console.log(`FAIL ${store} seed ${seed}: ${(err as Error).message.slice(0, 4000)}\n${describeSchedule(schedule)}`);
      continue;
    }
    done++;
    back.push(...o.backMs);
    const secs = ((Date.now() - t) / 1000).toFixed(1);
    if (o.violations.length === 0) {
      console.log(`ok   ${store} seed ${seed} (${secs} s): ${o.summary}`);
      continue;
    }
    failed.push(seed);
    console.log(`FAIL ${store} seed ${seed} (${secs} s)`);
    const small = await shrink(o, Number(values['shrink-minutes']) * 60_000, (l) => console.log(`  ${l}`));
    console.log(report(small));
  }
}
const sorted = back.sort((a, b) => a - b);
const at = (p: number) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];
if (sorted.length) {
  console.log(
    `back on the store after ${sorted.length} store outages healed: median ${at(0.5)} ms, 95th percentile ${at(0.95)} ms, slowest ${sorted[sorted.length - 1]} ms`,
  );
}
console.log(
  `nemesis: ${done} schedules (${runs} per store on ${stores.join(', ')}), seeds ${first}..${first + runs - 1}, ${failed.length} failed${failed.length ? ` (seeds ${[...new Set(failed)].join(', ')})` : ''}, ${((Date.now() - started) / 60_000).toFixed(1)} min`,
);
process.exit(failed.length > 0 ? 1 : 0);
