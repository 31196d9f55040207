/**
 * The heavy tenant's side of the bounds bench, run as a process of its own
 * so that making its calls (a 53 KB body, 990 silences) never runs on the
 * light tenant's client's event loop:
 *
 *   node --import tsx bench/sections/bounds-load.ts BASE LOAD TOKEN [PACE]
 *
 *   node --import tsx bench/sections/bounds-load.ts sink
 *
 * The first runs the load's preparation and prints `ready`; at a line on its standard
 * input it calls from HEAVY_CONNECTIONS connections (at PACE calls a second
 * in all, or back to back) until that input ends, then prints the calls a
 * second it made. The second is the webhook receiver: it prints its URL and
 * answers until its standard input ends.
 */
import { performance } from 'node:perf_hooks';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { createInterface } from 'node:readline';
import { startCountingSink } from '../http/sink.js';

export const HEAVY_CONNECTIONS = 8;
/** Idempotency-Keys a tenant may hold in the bench: low, so that the bound is reached before the timing. */
export const KEYS = 2000;

export async function call(url: string, token: string, method: string, body?: unknown, headers: Record<string, string> = {}) {
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

/** One kind of heavy load: `prepare` runs once per tenant before the timing (what the bound needs to be hit), `one` is one call. */
export interface Load {
  name: string;
  prepare?: (base: string, token: string) => Promise<void>;
  one: (base: string, i: number, token: string) => Promise<unknown>;
}

/** Runs `one` for i = 0..n-1 from HEAVY_CONNECTIONS connections. */
async function fill(n: number, one: (i: number) => Promise<unknown>) {
  await Promise.all(
    Array.from({ length: HEAVY_CONNECTIONS }, async (_, c) => {
      for (let i = c; i < n; i += HEAVY_CONNECTIONS) await one(i);
    }),
  );
}

const churn = async (base: string, i: number, token: string) => {
  const r = await call(`${base}/api/v2/silences`, token, 'POST', bigSilence(i));
  if (r.status === 200) await call(`${base}/api/v2/silence/${JSON.parse(r.body).silenceID}`, token, 'DELETE');
};

const keyedDecision = (base: string, i: number, token: string) =>
  call(
    `${base}/v1/incidents`,
    token,
    'POST',
    { element_id: `keyed-${i}`, fault_class: 'LOS', root_cause_id: `rc-keyed-${i}`, severity: 'MAJOR' },
    { 'idempotency-key': randomUUID() },
  );

/** What the heavy tenant sends, one call at a time per connection. */
export const loads: Load[] = [
  {
    name: 'ordinary decisions (busy baseline)',
    one: (base, i, token) =>
      call(`${base}/v1/incidents`, token, 'POST', { element_id: `plain-${i}`, fault_class: 'LOS', root_cause_id: `rc-plain-${i}`, severity: 'MAJOR' }),
  },
  {
    name: 'costly regexes (refused)',
    one: (base, _i, token) => call(`${base}/api/v2/silences`, token, 'POST', silence([{ name: 'element_id', value: '.{0,1000}'.repeat(256), isRegex: true }])),
  },
  { name: 'silence churn at the size bound', one: churn },
  {
    name: 'silence churn beside 990 open silences at the size bound',
    // The tenant's 990 open silences of 16 KB: what a reload after each write reads.
    prepare: (base, token) => fill(990, (n) => call(`${base}/api/v2/silences`, token, 'POST', bigSilence(-1 - n))),
    one: churn,
  },
  {
    name: 'a group past 100 members',
    prepare: (base, token) =>
      fill(120, (i) =>
        call(`${base}/v1/incidents`, token, 'POST', { element_id: `pre-${i}`, fault_class: 'LOS', root_cause_id: 'rc-storm', severity: 'MAJOR' }),
      ),
    one: (base, i, token) =>
      call(`${base}/v1/incidents`, token, 'POST', {
        element_id: `olt-${i}`,
        fault_class: 'LOS',
        root_cause_id: 'rc-storm',
        severity: i % 2 ? 'MAJOR' : 'MINOR',
      }),
  },
  {
    name: 'refusals of 1,000 bad alerts, kept by Idempotency-Key',
    one: (base, _i, token) =>
      call(
        `${base}/v1/alertmanager`,
        token,
        'POST',
        {
          version: '4',
          status: 'firing',
          alerts: Array.from({ length: 1000 }, (_, a) => ({ status: 'firing', labels: { alertname: `a${a}` }, startsAt: 'bad', fingerprint: 'not hex!' })),
        },
        { 'idempotency-key': randomUUID() },
      ),
  },
  {
    name: `keyed posts past the Idempotency-Key count (429)`,
    prepare: (base, token) => fill(KEYS, (i) => keyedDecision(base, -1 - i, token)),
    one: keyedDecision,
  },
];

/** Calls `load` from HEAVY_CONNECTIONS connections until `stopped` settles; answers the calls a second made. */
async function drive(base: string, load: Load, token: string, stopped: Promise<void>, pace?: number): Promise<number> {
  let stop = false;
  void stopped.then(() => {
    stop = true;
  });
  let sent = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: HEAVY_CONNECTIONS }, async (_, c) => {
      for (let i = c; !stop; i += HEAVY_CONNECTIONS) {
        if (pace !== undefined) {
          // A slot missed while a call ran is skipped, never made up in a burst.
          const due = t0 + (i * 1000) / pace;
          const now = performance.now();
          if (now < due) await new Promise((r) => setTimeout(r, due - now));
          else if (now - due > HEAVY_CONNECTIONS * (1000 / pace)) continue;
          if (stop) break;
        }
        await load.one(base, i, token).catch(() => {});
        sent++;
      }
    }),
  );
  return sent / ((performance.now() - t0) / 1000);
}

if (process.argv[1] === fileURLToPath(import.meta.url) && process.argv[2] === 'sink') {
  const sink = await startCountingSink();
  process.stdout.write(`${sink.url}\n`);
  process.stdin.resume();
  await new Promise((resolve) => process.stdin.once('end', resolve));
  await sink.close();
} else if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [base, name, token, pace] = process.argv.slice(2) as [string, string, string, string | undefined];
  const load = loads.find((l) => l.name === name);
  if (!load) throw new Error(`no load named ${name}`);
  await load.prepare?.(base, token);
  process.stdout.write('ready\n');
  // A line on standard input says go; its end says stop.
  const input = createInterface({ input: process.stdin });
  const stopped = new Promise<void>((resolve) => input.on('close', () => resolve()));
  await new Promise<void>((resolve) => input.once('line', () => resolve()));
  const rate = await drive(base, load, token, stopped, pace === undefined ? undefined : Number(pace));
  process.stdout.write(`${rate}\n`);
}
