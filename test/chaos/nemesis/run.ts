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
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Applies one fault and resolves when it is over (healed). */
async function apply(rig: Rig, f: Fault, busy: ChildProcess[]): Promise<void> {
  switch (f.kind) {
    case 'store-pause':
      await rig.redis!.kill('SIGSTOP');
      await sleep(f.ms);
      await rig.redis!.kill('SIGCONT');
      return;
    case 'store-sleep': {
      const cli = spawn('redis-cli', ['-p', String(rig.redis!.port), 'DEBUG', 'SLEEP', String(f.ms / 1000)], { stdio: 'ignore' });
      await new Promise((r) => cli.once('exit', r));
      return;
    }
    case 'store-restart':
      await rig.redis!.kill('SIGKILL');
      await sleep(f.ms);
      await rig.redis!.restart();
      return;
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
    const faults = Promise.all(
      s.faults.map(async ({ at, fault }) => {
        await sleep(at);
        log(`  ${Date.now() - started} ms: ${fault.kind}`);
        await apply(rig, fault, busy);
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
    const loud: Loud = { dataLost, deadLetters };
    const violations = checkNemesis(work, rig.receiver.requests, loud);
    if (violations.length > 0) inspect?.(rig, violations);
    const provisional = work.acked.filter((a) => a.provisional).length;
    const summary =
      `${work.acked.length} answered of ${work.requests} requests (${provisional} provisional), ${work.natsKeys.size} NATS faults, ` +
      `${rig.receiver.requests.length} receiver calls, ${rig.all.length - s.replicas} replica restarts, data lost ${dataLost ? 'reported' : 'no'}, dead letters ${deadLetters.size}`;
    return { schedule: s, violations, summary };
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
