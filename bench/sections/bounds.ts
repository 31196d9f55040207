/**
 * Section: bounds. Whether a tenant pressing on a bound costs another
 * tenant: one `onceonly serve` on SQLite with two tenants; the light tenant
 * decides one incident at a time and its latency is taken idle, then while
 * the heavy tenant, from 8 connections at once, keeps hitting one bound:
 *
 * - costly regexes: silences of `.{0,1000}` repeated 256 times (refused);
 * - silence churn: silences at the 16,384-character bound, created and expired;
 * - the same churn beside 990 open silences at that bound (what a reload after each write reads);
 * - a large group: incidents joining one group (grouping by root cause), past 100 members;
 * - large refusals: Alertmanager posts of 1,000 bad alerts with an Idempotency-Key;
 * - keyed posts past the tenant's Idempotency-Key count (set to 2,000 here), refused 429.
 *
 * Prints the light tenant's median and p99 under each, their ratios to
 * idle, and the median's to a busy baseline: the heavy tenant sending
 * ordinary decisions from as many connections. `npm run bench -- bounds`.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { randomUUID } from 'node:crypto';
import { startSink } from '../../test/fakes/http-fake.js';
import { tempDir } from '../../test/helpers/tmp.js';
import { startListening } from '../http/wrk.js';
import { table, type Section } from '../report.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const HEAVY = 'bench-heavy-tenant-token-01';
const LIGHT = 'bench-light-tenant-token-02';
const SAMPLES = Number(process.env.BOUNDS_SAMPLES ?? 300);
const HEAVY_CONNECTIONS = 8;

const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(p * xs.length))] ?? NaN;

async function call(url: string, token: string, method: string, body?: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(url, {
    method,
    // A bodiless call (DELETE) says no content type: an empty JSON body is refused (400).
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, body: await res.text() };
}

const silence = (matchers: Array<{ name: string; value: string; isRegex: boolean }>, comment = 'bench') => ({
  matchers: matchers.map((m) => ({ ...m, isEqual: true })),
  startsAt: new Date().toISOString(),
  endsAt: new Date(Date.now() + 3_600_000).toISOString(),
  createdBy: 'bench',
  comment,
});

/** A silence near the 16,384-character bound: 60 matchers of about 200 characters and a 3,000-character comment. */
const bigSilence = (i: number) =>
  silence(
    Array.from({ length: 60 }, (_, m) => ({ name: `l${m}`, value: `${i}-${'x'.repeat(200)}`, isRegex: false })),
    'c'.repeat(3000),
  );

/** What the heavy tenant sends, one call at a time per connection. */
const loads: Array<[string, (base: string, i: number) => Promise<unknown>]> = [
  [
    'ordinary decisions (busy baseline)',
    (base, i) =>
      call(`${base}/v1/incidents`, HEAVY, 'POST', { element_id: `plain-${i}`, fault_class: 'LOS', root_cause_id: `rc-plain-${i}`, severity: 'MAJOR' }),
  ],
  [
    'costly regexes (refused)',
    (base) => call(`${base}/api/v2/silences`, HEAVY, 'POST', silence([{ name: 'element_id', value: '.{0,1000}'.repeat(256), isRegex: true }])),
  ],
  [
    'silence churn at the size bound',
    async (base, i) => {
      const r = await call(`${base}/api/v2/silences`, HEAVY, 'POST', bigSilence(i));
      if (r.status === 200) await call(`${base}/api/v2/silence/${JSON.parse(r.body).silenceID}`, HEAVY, 'DELETE');
    },
  ],
  [
    'silence churn beside 990 open silences at the size bound',
    async (base, i) => {
      if (i < HEAVY_CONNECTIONS) {
        // Once, by the first call of each connection: the tenant's 990 open silences of 16 KB.
        for (let n = i; n < 990; n += HEAVY_CONNECTIONS) await call(`${base}/api/v2/silences`, HEAVY, 'POST', bigSilence(-1 - n));
      }
      const r = await call(`${base}/api/v2/silences`, HEAVY, 'POST', bigSilence(i));
      if (r.status === 200) await call(`${base}/api/v2/silence/${JSON.parse(r.body).silenceID}`, HEAVY, 'DELETE');
    },
  ],
  [
    'a group past 100 members',
    (base, i) =>
      call(`${base}/v1/incidents`, HEAVY, 'POST', {
        element_id: `olt-${i}`,
        fault_class: 'LOS',
        root_cause_id: 'rc-storm',
        severity: i % 2 ? 'MAJOR' : 'MINOR',
      }),
  ],
  [
    'refusals of 1,000 bad alerts, kept by Idempotency-Key',
    (base) =>
      call(
        `${base}/v1/alertmanager`,
        HEAVY,
        'POST',
        {
          version: '4',
          status: 'firing',
          alerts: Array.from({ length: 1000 }, (_, a) => ({ status: 'firing', labels: { alertname: `a${a}` }, startsAt: 'bad', fingerprint: 'not hex!' })),
        },
        { 'idempotency-key': randomUUID() },
      ),
  ],
  [
    'keyed posts past the Idempotency-Key count (429)',
    (base, i) =>
      call(
        `${base}/v1/incidents`,
        HEAVY,
        'POST',
        { element_id: `keyed-${i}`, fault_class: 'LOS', root_cause_id: `rc-keyed-${i}`, severity: 'MAJOR' },
        { 'idempotency-key': randomUUID() },
      ),
  ],
];

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

export async function boundsSection(log: (s: string) => void): Promise<Section> {
  const dir = tempDir('onceonly-bench-bounds-');
  const sink = await startSink(200, {});
  const config = join(dir.path, 'onceonly.yml');
  writeFileSync(
    config,
    [
      'tenants:',
      `  - { id: heavy, tokens: [${HEAVY}], rate_limit: { per_second: 100000, burst: 100000 } }`,
      `  - { id: light, tokens: [${LIGHT}] }`,
      'grouping: { by: [root_cause_id], wait_seconds: 1 }',
      'limits: { idempotency_keys_per_tenant: 2000 }',
      `adapters: [ { name: tickets, type: webhook, url: "${sink.url}/g", grouped: true } ]`,
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
    rows.push(['idle (baseline)', p50.toFixed(2), p99.toFixed(2), '1.0', '1.0', '', '']);
    let busy = Number.NaN;
    log(`bounds: idle p50 ${p50.toFixed(2)} ms, p99 ${p99.toFixed(2)} ms`);
    for (const [name, one] of loads) {
      let stop = false;
      let sent = 0;
      const heavy = Array.from({ length: HEAVY_CONNECTIONS }, async (_, c) => {
        for (let i = c; !stop; i += HEAVY_CONNECTIONS) {
          await one(srv.url, i).catch(() => {});
          sent++;
        }
      });
      await new Promise((r) => setTimeout(r, 500));
      const under = await lightLatencies(srv.url, name.slice(0, 8));
      stop = true;
      await Promise.all(heavy);
      const [u50, u99] = [pct(under, 0.5), pct(under, 0.99)];
      log(`bounds: ${name}: p50 ${u50.toFixed(2)} ms, p99 ${u99.toFixed(2)} ms, heavy calls ${sent}`);
      if (Number.isNaN(busy)) busy = u50;
      rows.push([name, u50.toFixed(2), u99.toFixed(2), (u50 / p50).toFixed(1), (u99 / p99).toFixed(1), (u50 / busy).toFixed(1), sent.toLocaleString('en-US')]);
    }
  } finally {
    await srv.stop();
    await sink.close();
    dir.remove();
  }
  return {
    title: 'Another tenant beside a tenant pressing on a bound',
    body: [
      `One server on SQLite; the light tenant decides one incident at a time (${SAMPLES} samples) while the heavy tenant, from ${HEAVY_CONNECTIONS} connections, keeps hitting one bound. Milliseconds; ratios to idle, and of the median to the busy baseline (the heavy tenant sending ordinary decisions from as many connections). Both tenants share the replica's one event loop and 2 cores with the load generator, so the busy baseline is what any load of ${HEAVY_CONNECTIONS} connections costs; the last ratio is what pressing on the bound adds to it.`,
      table(['heavy tenant doing', 'light p50', 'light p99', 'p50 / idle', 'p99 / idle', 'p50 / busy', 'heavy calls'], rows),
    ],
    targets: [],
  };
}
