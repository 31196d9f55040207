/**
 * Section: bounds. Whether a tenant pressing on a bound costs another
 * tenant: one `onceonly serve` on SQLite; the light tenant decides one
 * incident at a time and its latency is taken idle, then while another
 * tenant, from 8 connections at once, keeps hitting one bound: first paced
 * at BOUNDS_PACE calls a second (100) by a tenant on the default rate limit,
 * then as fast as the connections go by a tenant with no practical limit:
 *
 * - costly regexes: silences of `.{0,1000}` repeated 256 times (refused);
 * - silence churn: silences at the 16,384-character bound, created and expired;
 * - the same churn beside 990 open silences at that bound (what a reload after each write reads);
 * - a large group: incidents joining one group (grouping by root cause), past 100 members;
 * - large refusals: Alertmanager posts of 1,000 bad alerts with an Idempotency-Key;
 * - keyed posts past the tenant's Idempotency-Key count (set to 2,000 here), refused 429.
 *
 * Prints the light tenant's median and p99 under each and their ratios to
 * idle; for the flood, also the median's to a busy baseline: the heavy
 * tenant flooding ordinary decisions. `npm run bench -- bounds`.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { drained } from '../http/sink.js';
import { tempDir } from '../../test/helpers/tmp.js';
import { startListening } from '../http/wrk.js';
import { table, type Section } from '../report.js';
import { call, HEAVY_CONNECTIONS, KEYS, loads, type Load } from './bounds-load.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const HEAVY = 'bench-heavy-tenant-token-01';
/** The paced tenant: the default rate limit (500 a second, a burst of 1,000). */
const PACED = 'bench-paced-tenant-token-03';
const LIGHT = 'bench-light-tenant-token-02';
const SAMPLES = Number(process.env.BOUNDS_SAMPLES ?? 300);
const LOAD_SCRIPT = fileURLToPath(new URL('./bounds-load.ts', import.meta.url));
/** The paced run's heavy calls a second, over all its connections. */
const PACE = Number(process.env.BOUNDS_PACE ?? 100);

const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(p * xs.length))] ?? NaN;

/** The light tenant's decision latencies, one at a time, SAMPLES of them. */
async function lightLatencies(base: string, tag: string): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < SAMPLES; i++) {
    const t = performance.now();
    const r = await call(`${base}/v1/incidents`, LIGHT, 'POST', {
      element_id: `light-${tag}-${i % 20}`,
      fault_class: 'LOS',
      root_cause_id: `rc-${i}`,
      severity: 'MAJOR',
    });
    if (r.status !== 200) throw new Error(`the light tenant's decision answered ${r.status}: ${r.body.slice(0, 200)}`);
    out.push(performance.now() - t);
  }
  return out;
}

/** `bounds-load.ts sink`: a counting webhook receiver in a child process, until its standard input ends. */
async function startSinkProcess() {
  const child = spawn(process.execPath, ['--import', 'tsx', LOAD_SCRIPT, 'sink'], { cwd: ROOT, stdio: ['pipe', 'pipe', 'inherit'] });
  const url = (await createInterface({ input: child.stdout! })[Symbol.asyncIterator]().next()).value as string;
  if (!url?.startsWith('http://')) throw new Error(`the sink process did not start: ${url}`);
  return { url, close: () => new Promise<void>((resolve) => child.once('exit', () => resolve()).stdin!.end()) };
}

/**
 * The light tenant's latencies while a process of its own sends `load` as
 * `token` (at `pace` calls a second, or back to back); answers them and the
 * heavy calls' rate. The load's preparation and what it left queued run
 * before the timing.
 */
async function underLoad(base: string, load: Load, token: string, pace?: number) {
  const child = spawn(process.execPath, ['--import', 'tsx', LOAD_SCRIPT, base, load.name, token, ...(pace === undefined ? [] : [String(pace)])], {
    cwd: ROOT,
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
  const first = await lines.next();
  if (first.value !== 'ready') throw new Error(`the load process did not start: ${first.value}`);
  await drained(base, 60_000);
  child.stdin!.write('go\n');
  await new Promise((r) => setTimeout(r, 500));
  const latencies = await lightLatencies(base, `${pace ?? 'f'}-${load.name.slice(0, 8)}`);
  child.stdin!.end();
  const rate = Number((await lines.next()).value);
  return { latencies, rate };
}

export async function boundsSection(log: (s: string) => void): Promise<Section> {
  const dir = tempDir('onceonly-bench-bounds-');
  // The webhook receiver runs in a process of its own too: its work is not the light client's.
  const sink = await startSinkProcess();
  const config = join(dir.path, 'onceonly.yml');
  writeFileSync(
    config,
    [
      'tenants:',
      `  - { id: heavy, tokens: [${HEAVY}], rate_limit: { per_second: 100000, burst: 100000 } }`,
      `  - { id: paced, tokens: [${PACED}] }`,
      `  - { id: light, tokens: [${LIGHT}] }`,
      'grouping: { by: [root_cause_id], wait_seconds: 1 }',
      `limits: { idempotency_keys_per_tenant: ${KEYS} }`,
      `adapters: [ { name: tickets, type: webhook, url: "${sink.url}", grouped: true } ]`,
      '',
    ].join('\n'),
  );
  const srv = await startListening(
    process.execPath,
    ['dist/cli/main.js', 'serve', '--port', '0', '--store', `sqlite:${join(dir.path, 'b.db')}`, '--config', config],
    {},
    ROOT,
  );
  const rows: Array<Array<string | number>> = [];
  try {
    await lightLatencies(srv.url, 'warm');
    const idle = await lightLatencies(srv.url, 'idle');
    const [p50, p99] = [pct(idle, 0.5), pct(idle, 0.99)];
    rows.push(['idle (baseline)', p50.toFixed(2), p99.toFixed(2), '1.0', '1.0', '', p50.toFixed(2), '1.0', '', '']);
    let busy = Number.NaN;
    log(`bounds: idle p50 ${p50.toFixed(2)} ms, p99 ${p99.toFixed(2)} ms`);
    for (const load of loads) {
      // Paced first, by a tenant of its own: the flood's backlog (a group's deliveries) is not in its figures.
      const paced = await underLoad(srv.url, load, PACED, PACE);
      const [q50, q99] = [pct(paced.latencies, 0.5), pct(paced.latencies, 0.99)];
      const flood = await underLoad(srv.url, load, HEAVY);
      const u50 = pct(flood.latencies, 0.5);
      if (Number.isNaN(busy)) busy = u50;
      log(
        `bounds: ${load.name}: paced p50 ${q50.toFixed(2)} ms, p99 ${q99.toFixed(2)} ms (${paced.rate.toFixed(0)}/s); flood p50 ${u50.toFixed(2)} ms (${flood.rate.toFixed(0)}/s)`,
      );
      rows.push([
        load.name,
        q50.toFixed(2),
        q99.toFixed(2),
        (q50 / p50).toFixed(1),
        (q99 / p99).toFixed(1),
        paced.rate.toFixed(0),
        u50.toFixed(2),
        (u50 / p50).toFixed(1),
        (u50 / busy).toFixed(1),
        flood.rate.toFixed(0),
      ]);
    }
  } finally {
    await srv.stop();
    await sink.close();
    dir.remove();
  }
  return {
    title: 'Another tenant beside a tenant pressing on a bound',
    body: [
      `One server on SQLite; the light tenant decides one incident at a time (${SAMPLES} samples) while the heavy tenant, from ${HEAVY_CONNECTIONS} connections, keeps hitting one bound: paced at ${PACE} calls a second by a tenant on the default rate limit (500 a second, a burst of 1,000), then as fast as the connections go (flood) by a tenant with no practical rate limit. Milliseconds; ratios to idle, and of the flood's median to the busy baseline (a flood of ordinary decisions). The paced columns are the bound's own cost: another tenant at a steady rate. Both tenants share the replica's one event loop and 2 cores with the load generator, so a flood costs the light tenant what any ${HEAVY_CONNECTIONS} saturating connections cost, whatever they send; the flood's last ratio is what pressing on the bound adds to that.`,
      table(
        [
          'heavy tenant doing',
          'paced: light p50',
          'light p99',
          'p50 / idle',
          'p99 / idle',
          'heavy calls/s',
          'flood: light p50',
          'p50 / idle',
          'p50 / busy',
          'heavy calls/s',
        ],
        rows,
      ),
    ],
    targets: [],
  };
}
