/**
 * The chaos harness: real `onceonly serve` replicas that a test can SIGKILL
 * and restart while clients keep sending, and a driver that records every
 * attempt (start, end, status, answer) into a History for the checker.
 * A client whose replica gave no answer retries on another, as a load
 * balancer or a monitoring pipeline's retry would: the lost attempt stays in
 * the history as indeterminate.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { openTickets, type SnowRecord } from '../fakes/servicenow-fake.js';
import { metric, post } from '../helpers/load.js';
import { until } from '../helpers/wait.js';
import { spawnServer, type ServerProcess } from '../helpers/process.js';
import type { Recorded } from '../fakes/http-fake.js';
import { History, type Decision, type Op } from './history.js';

export interface Kill {
  at: number;
  exited: number;
}

export interface Replicas {
  readonly urls: string[];
  readonly procs: ServerProcess[];
  /** SIGKILL replica i and start it again (on a new port); resolves when it listens. */
  crash(i: number): Promise<void>;
  /**
   * Each crash: when its SIGKILL was sent and when the process was seen to
   * exit (Date.now(), the clock the fakes stamp arrivals with). The killed
   * process may still make calls in between.
   */
  readonly kills: Kill[];
  stop(): Promise<void>;
}

/**
 * `n` replicas on one store, each with its own fail-open journal and the
 * extra config given. The fail-open timeout is long unless a test is about
 * fail-open: on a loaded 2-core machine a short one would fail open by itself.
 */
export async function startReplicas(n: number, store: string, dir: string, extraConfig = '', failOpenTimeoutMs = 2000, name = 'replica'): Promise<Replicas> {
  const args = (i: number) => {
    const config = join(dir, `${name}-${i}.yaml`);
    writeFileSync(
      config,
      `failopen:\n  timeout_ms: ${failOpenTimeoutMs}\n  probe_interval_ms: 100\n  journal_path: ${join(dir, `journal-${name}-${i}.db`)}\n${extraConfig}`,
    );
    return ['--port', '0', '--store', store, '--config', config];
  };
  const procs: ServerProcess[] = await Promise.all(Array.from({ length: n }, (_, i) => spawnServer(args(i))));
  const urls = procs.map((p) => p.url);
  const kills: Kill[] = [];
  return {
    urls,
    procs,
    kills,
    async crash(i) {
      const at = Date.now();
      await procs[i]!.stop('SIGKILL');
      kills.push({ at, exited: Date.now() });
      urls[i] = ''; // clients route around it until it is back
      procs[i] = await spawnServer(args(i));
      urls[i] = procs[i]!.url;
    },
    async stop() {
      await Promise.all(procs.map((p) => p.stop('SIGKILL')));
    },
  };
}

export interface IngestShot {
  key: string;
  fp: string;
  path: string;
  body: unknown;
}

/**
 * Sends one shot as client `client` would: to its replica, and on no answer
 * (or a 5xx) to the next, until one answers or `budgetMs` has passed (a
 * replica restarting on a loaded machine takes seconds, so the budget is
 * time, not a count of attempts), recording every attempt. A 4xx is the
 * test's own mistake and throws.
 */
async function send(shot: IngestShot, client: number, replicas: Replicas, history: History, budgetMs: number): Promise<{ op: Op; body: any; tries: number }> {
  const deadline = Date.now() + budgetMs;
  let a = 0;
  for (; a === 0 || Date.now() < deadline; a++) {
    const i = (client + a) % replicas.urls.length;
    const url = replicas.urls[i];
    if (!url) {
      await new Promise((r) => setTimeout(r, 20));
      continue;
    }
    const start = history.now();
    const r = await post(`${url}${shot.path}`, shot.body);
    const op = history.record({
      kind: 'ingest',
      key: shot.key,
      fp: shot.fp,
      replica: i,
      start,
      end: history.now(),
      status: r.status,
      ...(r.status === 200 && r.body.decision ? { decision: r.body.decision as Decision, provisional: r.body.provisional === true } : {}),
      ...(r.status === 200 && r.body.outcome ? { outcome: r.body.outcome as string } : {}),
    });
    if (History.ok(op)) return { op, body: r.body, tries: a + 1 };
    if (op.status !== 0 && op.status < 500) throw new Error(`shot ${JSON.stringify(shot.body)} refused with ${op.status}: ${JSON.stringify(r.body)}`);
  }
  throw new Error(`shot ${JSON.stringify(shot.body)} got no answer in ${budgetMs} ms (${a} attempts)`);
}

/**
 * Sends every shot with `concurrency` clients spread over the replicas,
 * recording each attempt; a shot is retried on another replica until it is
 * answered. Calls `progress(done)` after each answered shot.
 */
export async function drive(
  shots: IngestShot[],
  concurrency: number,
  replicas: Replicas,
  history: History,
  progress: (done: number) => void = () => {},
  budgetMs = 60_000,
): Promise<{ answered: number; retried: number }> {
  let next = 0;
  let answered = 0;
  let retried = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async (_, client) => {
      while (next < shots.length) {
        const { tries } = await send(shots[next++]!, client, replicas, history, budgetMs);
        retried += tries - 1;
        progress(++answered);
      }
    }),
  );
  return { answered, retried };
}

/**
 * As drive, but each lane is one producer sending its shots in order, one at
 * a time (a device's connection): order within a lane is kept, lanes overlap.
 */
export async function driveLanes(lanes: IngestShot[][], replicas: Replicas, history: History, progress: (done: number) => void = () => {}, budgetMs = 60_000) {
  let answered = 0;
  await Promise.all(
    lanes.map(async (lane, client) => {
      for (const shot of lane) {
        await send(shot, client, replicas, history, budgetMs);
        progress(++answered);
      }
    }),
  );
  return answered;
}

/** A deterministic shuffle (xorshift32) so a failing run can be replayed from its printed seed. */
export function shuffle<T>(xs: T[], seed: number): T[] {
  let s = seed >>> 0 || 1;
  const rand = () => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return (s >>> 0) / 2 ** 32;
  };
  const out = [...xs];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

/**
 * Replica config delivering to a ServiceNow stand-in; a dead worker's lease
 * runs out after 3 s. The retry budget is generous (20 retries): these tests
 * kill replicas, not the destination, and a starved machine timing a call out
 * five times must not park a ticket as a dead letter that reads as a lost one.
 */
export const toServicenow = (url: string) => `delivery: { lease_ms: 3000, base_delay_ms: 50, max_delay_ms: 500, max_retries: 20 }
adapters:
  - { name: snow, type: servicenow, instance_url: "${url}", username: onceonly, password: secret, timeout_ms: 2000 }
`;

/**
 * Waits until every replica has nothing left to deliver (and `also` holds),
 * then `quietMs` more: a late duplicate from an expired lease (3 s in these
 * tests) would arrive by then.
 *
 * The budget is progress, not a wall clock: on a machine with a core spun by
 * something else delivery can be ten times slower, and that is not a fault.
 * It fails when nothing moves (the tickets, the queues, the dead letters) for
 * `stallMs`, which is what a lost delivery or a stuck worker looks like, or
 * after 20 minutes in all.
 */
export async function delivered(replicas: Replicas, what: () => string, also: () => boolean = () => true, quietMs = 3000, stallMs = 60_000) {
  // What the replicas last said, for the message when it does not settle: still queued, or parked as dead letters.
  let last = '';
  let seen = '';
  let movedAt = Date.now();
  await until(
    async () => {
      const pending = await Promise.all(replicas.urls.map((u) => metric(u, /^onceonly_deliveries_pending (\d+)/m)));
      const dead = await Promise.all(replicas.urls.map((u) => metric(u, /^onceonly_dead_letters (\d+)/m)));
      last = `pending ${pending.join('/')}, dead letters ${dead.join('/')}`;
      const state = `${what()} ${last}`;
      if (state !== seen) [seen, movedAt] = [state, Date.now()];
      else if (Date.now() - movedAt > stallMs) throw new Error(`delivery made no progress for ${stallMs / 1000} s: ${state}`);
      return also() && pending.every((p) => p === 0);
    },
    20 * 60_000,
    () => `${what()} (${last})`,
  );
  await new Promise((r) => setTimeout(r, quietMs));
}

/**
 * Waits until everything is delivered and the ITSM holds at least `keys`
 * standing tickets, and counts: standing tickets, keys with more than one
 * standing, and duplicates the adapter cancelled (merged).
 */
export async function settledTickets(replicas: Replicas, records: Map<string, SnowRecord>, keys: number) {
  await delivered(
    replicas,
    () => `${openTickets(records).length} tickets of ${keys}`,
    () => openTickets(records).length >= keys,
  );
  const tickets = openTickets(records);
  const perKey = new Map<string, number>();
  for (const r of tickets) perKey.set(r.correlation_id!, (perKey.get(r.correlation_id!) ?? 0) + 1);
  return { tickets, duplicates: [...perKey.values()].filter((n) => n > 1).length, merged: records.size - tickets.length };
}

/**
 * Every repeat of a call at the receiver (a second arrival with the same
 * Idempotency-Key) must be explained by a kill: the arrival before it came
 * from the killed replica, at most `windowMs` before its SIGKILL or while it
 * was dying (before it was seen to exit), and the repeat came after the
 * SIGKILL. That is a call the receiver applied while the killed replica was
 * still waiting for the answer or settling it. `windowMs` is the receiver's
 * own delay plus the time a settle takes to commit on a loaded machine.
 * `readLagMs` is how late the receiver may read bytes a replica wrote before
 * it died: the fake runs in the test's own process, which is also restarting
 * the replica and driving the clients, so on a loaded machine it reads a dead
 * sender's request some milliseconds after the exit was seen (CI met 8 ms).
 * Returns the repeats, the unexplained ones, and the most arrivals any one
 * call had.
 */
export function repeatsAgainstKills(requests: readonly Recorded[], kills: readonly Kill[], windowMs: number, readLagMs = 250) {
  const byKey = new Map<string, number[]>();
  for (const r of requests) {
    const k = String(r.headers['idempotency-key'] ?? '');
    if (!k) continue;
    const ats = byKey.get(k);
    if (ats) ats.push(r.at);
    else byKey.set(k, [r.at]);
  }
  const t0 = kills[0]?.at ?? 0;
  let repeats = 0;
  const unexplained: string[] = [];
  let most = 0;
  for (const [key, ats] of byKey) {
    ats.sort((a, b) => a - b);
    most = Math.max(most, ats.length);
    for (let i = 1; i < ats.length; i++) {
      repeats++;
      const before = ats[i - 1]!;
      const after = ats[i]!;
      if (!kills.some((k) => before <= k.exited + readLagMs && after >= k.at && k.at - before <= windowMs)) {
        unexplained.push(
          `${key}: arrived at +${before - t0} ms and again at +${after - t0} ms (kills at ${kills.map((k) => `+${k.at - t0}..${k.exited - t0}`).join(', ')})`,
        );
      }
    }
  }
  return { calls: byKey.size, repeats, unexplained, most };
}

/**
 * The slowest answer of the first `count` to complete: every one of them
 * came before a fault that is injected once `count` answers are in, so it
 * is what this machine, loaded as it is in this run, takes on a healthy store.
 */
export function healthySlowest(ops: readonly { start: number; end: number }[], count: number): number {
  const first = [...ops].sort((a, b) => a.end - b.end).slice(0, Math.max(1, count));
  return Math.max(...first.map((o) => o.end - o.start));
}

/**
 * How long an answer may take under a fault: what the fault itself allows
 * (`allowanceMs`: the fail-open timeouts) plus the machine's own slowness,
 * four times the healthy slowest of the same run and never less than 1.5 s.
 * A loaded machine widens the margin with what it measurably costs; a fault
 * that makes a request hang outgrows any margin.
 */
export function assertNoHang(slowest: number, allowanceMs: number, healthyMs: number, what: string): void {
  const margin = Math.max(1500, 4 * healthyMs);
  assert.ok(
    slowest < allowanceMs + margin,
    `no answer waited past ${what} plus ${margin.toFixed(0)} ms (4 × the healthy slowest, ${healthyMs.toFixed(0)} ms, at least 1.5 s): slowest ${slowest.toFixed(0)} ms`,
  );
}
