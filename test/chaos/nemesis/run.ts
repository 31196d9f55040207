/**
 * Runs one nemesis schedule over real processes and checks the outcome;
 * shrinks a failing schedule by dropping faults one at a time while it
 * still fails.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { jetstreamManager } from '@nats-io/jetstream';
import { receiverQuiet, caughtUp } from '../../helpers/settle.js';
import { until } from '../../helpers/wait.js';
import { checkNemesis, type Loud } from './check.js';
import { RECEIVER_TIMEOUT_MS, startRig, type Rig } from './rig.js';
import { describeSchedule, type Fault, type Schedule } from './schedule.js';
import { runWorkload } from './workload.js';

export interface Outcome {
  schedule: Schedule;
  violations: string[];
  summary: string;
  /** Per store outage: ms from its healing until every replica was ready again. */
  backMs: number[];
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * After a store fault heals: how long until every replica is ready again
 * (`/readyz` 200, so off its journal and deciding on the store), polled
 * every 50 ms. A figure the run prints, not a check: the machine is shared.
 */
async function backAfter(rig: Rig): Promise<number> {
  const healed = Date.now();
  const ready = (u: string) =>
    fetch(`${u}/readyz`, { signal: AbortSignal.timeout(2000) }).then(
      (r) => r.status === 200,
      () => false,
    );
  while (Date.now() - healed < 60_000) {
    if (rig.urls.every(Boolean) && (await Promise.all(rig.urls.map(ready))).every(Boolean)) return Date.now() - healed;
    await sleep(50);
  }
  return Number.POSITIVE_INFINITY;
}

/** The store faults after which replicas fail open and must come back. */
const STORE_OUTAGES = new Set<Fault['kind']>(['store-pause', 'store-sleep', 'store-restart', 'store-blackhole']);

/** The replicas' fail-open timeout (the default the rig runs with): a store answering slower than this is away for them. */
const FAILOPEN_TIMEOUT_MS = 50;

/** Whether the replicas fail open under a fault: an outage, or latency whose round trip passes their timeout. */
const isOutage = (f: Fault) => STORE_OUTAGES.has(f.kind) || (f.kind === 'store-latency' && 2 * f.oneWayMs >= FAILOPEN_TIMEOUT_MS);

/** Each rig's store restarts and sleeps in progress, one after another. */
const restarts = new WeakMap<Rig, Promise<void>>();

/** Applies one fault and resolves when it is over (healed). */
async function apply(rig: Rig, f: Fault, busy: ChildProcess[]): Promise<void> {
  switch (f.kind) {
    case 'store-pause':
      await rig.redis!.kill('SIGSTOP');
      await sleep(f.ms);
      await rig.redis!.kill('SIGCONT');
      return;
    case 'store-sleep': {
      // In the restarts' line: a restart drawn during the sleep would kill the server under it, and the
      // sleep's answer (never OK then) would read as a refused DEBUG.
      const mine = (restarts.get(rig) ?? Promise.resolve()).then(async () => {
        const cli = spawn('redis-cli', ['-p', String(rig.redis!.port), 'DEBUG', 'SLEEP', String(f.ms / 1000)], { stdio: ['ignore', 'pipe', 'ignore'] });
        let said = '';
        cli.stdout.on('data', (d) => (said += d));
        await new Promise((r) => cli.once('exit', r));
        // A refused DEBUG answers at once with an error: a fault that did not happen must not pass for one that did.
        if (said.trim() !== 'OK') throw new Error(`DEBUG SLEEP was refused: ${said.trim()}`);
      });
      restarts.set(
        rig,
        mine.catch(() => undefined),
      );
      await mine;
      return;
    }
    case 'store-restart': {
      // One restart of the store at a time, as one server restarts: a second drawn during the first waits for it.
      const run = restarts.get(rig) ?? Promise.resolve();
      const mine = run.then(async () => {
        if (rig.pgServer) {
          // Postgres crashed (pg_ctl stop -m immediate): what it committed survives, through crash recovery.
          await rig.pgServer.crash();
          await sleep(f.ms);
          await rig.pgServer.start();
          return;
        }
        await rig.redis!.kill('SIGKILL');
        await sleep(f.ms);
        await rig.redis!.restart();
      });
      restarts.set(
        rig,
        mine.catch(() => undefined),
      );
      await mine;
      return;
    }
    case 'store-blackhole':
      rig.proxy.blackhole();
      await sleep(f.ms);
      rig.proxy.heal({ dropConnections: f.drop });
      return;
    case 'store-reset':
      rig.proxy.reset();
      return;
    case 'store-latency':
      rig.proxy.latency(f.oneWayMs);
      await sleep(f.ms);
      rig.proxy.latency(0);
      return;
    case 'replica-kill':
      await rig.restart(f.replica, f.signal);
      return;
    case 'receiver': {
      const until = Date.now() + f.ms;
      const before = rig.receiverFault;
      rig.receiverFault = (at) =>
        at >= until
          ? before(at)
          : f.answer === '429'
            ? { status: 429, retryAfter: f.retryAfterS ?? 1 }
            : f.answer === '500'
              ? { status: 500 }
              : { delayMs: f.answer === 'slow' ? 300 : RECEIVER_TIMEOUT_MS + 500 };
      await sleep(f.ms);
      return;
    }
    case 'busy': {
      const spin = Array.from({ length: f.n }, () => spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' }));
      busy.push(...spin);
      await sleep(f.ms);
      for (const p of spin) p.kill('SIGKILL');
      return;
    }
  }
}

async function metricOf(url: string, re: RegExp): Promise<number> {
  try {
    const text = await (await fetch(`${url}/metrics`, { signal: AbortSignal.timeout(5000) })).text();
    return [...text.matchAll(new RegExp(re.source, 'gm'))].reduce((s, m) => s + Number(m[1]), 0);
  } catch {
    return 0;
  }
}

/** Runs `s` once: the rig, the workload with the faults on their schedule, every fault healed, then the receiver settled and checked. */
export async function runSchedule(
  s: Schedule,
  log: (line: string) => void = () => {},
  /** Called with the rig still up when the schedule failed: what a debugging run reads (the replicas' logs). */
  inspect?: (rig: Rig, violations: string[]) => void,
): Promise<Outcome> {
  const rig = await startRig(s);
  const busy: ChildProcess[] = [];
  let dataLost = false;
  const watch = setInterval(() => {
    for (const url of rig.urls) if (url) void metricOf(url, /^onceonly_store_data_lost_total\{[^}]*\} (\d+)/).then((n) => (dataLost ||= n > 0));
  }, 500);
  try {
    const started = Date.now();
    const recoveries: Array<Promise<number>> = [];
    /** Each store outage, from its fault to every replica back on the store (Date.now()). */
    const outages: Array<{ from: number; to: number }> = [];
    const faults = Promise.all(
      s.faults.map(async ({ at, fault }) => {
        await sleep(at);
        log(`  ${Date.now() - started} ms: ${fault.kind}`);
        const from = Date.now();
        await apply(rig, fault, busy);
        if (isOutage(fault)) {
          const back = backAfter(rig);
          recoveries.push(back);
          void back.then((ms) => outages.push({ from, to: Date.now() + (Number.isFinite(ms) ? 0 : 60_000) }));
        }
      }),
    );
    const work = await runWorkload(rig, s.seed, s.workloadMs, `s${s.seed}`);
    await faults;
    // Everything healed: let every replica come back, drain NATS, deliver, and go quiet.
    await until(
      async () =>
        (
          await Promise.all(
            rig.urls.map((u) =>
              fetch(`${u}/readyz`).then(
                (r) => r.status === 200,
                () => false,
              ),
            ),
          )
        ).every(Boolean) || null,
      60_000,
      () => 'a replica never became ready again after the faults',
    );
    const jsm = await jetstreamManager(rig.nc);
    const stream = `OO_${rig.subject.split('.')[0]}`;
    await until(
      async () => {
        const c = await jsm.consumers.info(stream, 'onceonly');
        return (c.num_pending === 0 && c.num_ack_pending === 0) || null;
      },
      60_000,
      () => 'NATS messages still pending',
    );
    await receiverQuiet(() => rig.receiver.requests, 3000, 90_000);
    await caughtUp(
      rig.procs.map((p) => ({ url: p.url })),
      30_000,
    );
    await receiverQuiet(() => rig.receiver.requests, 1000, 30_000);
    for (const p of rig.procs) dataLost ||= (await metricOf(p.url, /^onceonly_store_data_lost_total\{[^}]*\} (\d+)/)) > 0;
    dataLost ||= rig.all.some((p) => p.lines.some((l) => l.includes('lost its data')));
    const deadLetters = new Set<string>();
    const dl = (await (await fetch(`${rig.urls[0]}/v1/dead-letters`)).json()) as { dead_letters?: Array<{ key?: string }> } | Array<{ key?: string }>;
    for (const d of Array.isArray(dl) ? dl : (dl.dead_letters ?? [])) if (d.key) deadLetters.add(d.key);
    await Promise.all(recoveries);
    const loud: Loud = { dataLost, deadLetters, outages };
    const violations = checkNemesis(work, rig.receiver.requests, loud);
    if (violations.length > 0) inspect?.(rig, violations);
    const provisional = work.acked.filter((a) => a.provisional).length;
    const back = await Promise.all(recoveries);
    const summary =
      `${work.acked.length} answered of ${work.requests} requests (${provisional} provisional), ${work.natsKeys.size} NATS faults, ` +
      `${rig.receiver.requests.length} receiver calls, ${rig.all.length - s.replicas} replica restarts, data lost ${dataLost ? 'reported' : 'no'}, dead letters ${deadLetters.size}` +
      (back.length ? `, back on the store ${back.map((ms) => `${ms} ms`).join(', ')} after each outage healed` : '');
    return { schedule: s, violations, summary, backMs: back };
  } finally {
    clearInterval(watch);
    for (const p of busy) p.kill('SIGKILL');
    await rig.close();
  }
}

/** Drops one fault at a time while the schedule still fails; at most `budgetMs` of runs. */
export async function shrink(failing: Outcome, budgetMs: number, log: (line: string) => void): Promise<Outcome> {
  let best = failing;
  const stop = Date.now() + budgetMs;
  for (let i = best.schedule.faults.length - 1; i >= 0 && Date.now() < stop; i--) {
    const candidate: Schedule = { ...best.schedule, faults: best.schedule.faults.filter((_, j) => j !== i) };
    const o = await runSchedule(candidate);
    log(`shrink: without fault ${i}: ${o.violations.length} violation(s)`);
    if (o.violations.length > 0) best = o;
  }
  return best;
}

/** A failure's report: the seed, the schedule, what broke. */
export const report = (o: Outcome) =>
  `nemesis found ${o.violations.length} violation(s)\n${describeSchedule(o.schedule)}\n${o.summary}\n${o.violations.slice(0, 20).join('\n')}`;
