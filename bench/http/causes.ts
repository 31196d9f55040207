/**
 * Where a server's CPU goes per answer: a V8 CPU profile (node --cpu-prof)
 * taken under load, each sample given to one cause by its frames, the
 * module loading at start left out (it is not per answer). A sample goes to
 * the first rule its innermost frame with a source matches (a native frame
 * such as a hash or JSON.parse is its caller's), except the few natives
 * that are causes of their own (the socket write, the garbage collector).
 */
import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string };
  children?: number[];
}

interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** The causes, in the order a table lists them. */
export const CAUSES = [
  'socket write (kernel, loopback)',
  'Node: HTTP parser, streams, sockets, events',
  'fastify: routing, hooks, body parsing, reply',
  'onceonly HTTP layer (access, routes, hooks)',
  'validation (zod, and the common shape checked by hand)',
  'the decision (identity, engine, store code and the statements it runs)',
  'store client (better-sqlite3 transactions and commits, @redis/client)',
  'history (recorder, store)',
  'metrics and logs (prom-client, pino)',
  'delivery worker and sweeps',
  'garbage collection',
  'V8 and natives, unattributed',
] as const;
export type Cause = (typeof CAUSES)[number];

const RULES: Array<[Cause, RegExp]> = [
  ['history (recorder, store)', /\/dist\/(history\/|store\/[^/]+\/[^/]*history)/],
  ['delivery worker and sweeps', /\/dist\/(delivery\/|app\/sweeper)/],
  ['onceonly HTTP layer (access, routes, hooks)', /\/dist\/(http\/|access\/)/],
  ['validation (zod, and the common shape checked by hand)', /node_modules\/zod\/|\/dist\/inputs\/(incident\/(common-shape|schema)|limits)\.js/],
  ['the decision (identity, engine, store code and the statements it runs)', /\/dist\/|\/bench\/http\//],
  ['store client (better-sqlite3 transactions and commits, @redis/client)', /node_modules\/(better-sqlite3|@redis|cluster-key-slot|generic-pool)\//],
  ['metrics and logs (prom-client, pino)', /node_modules\/(prom-client|pino|tdigest|bintrees)/],
  ['fastify: routing, hooks, body parsing, reply', /node_modules\//],
  ['Node: HTTP parser, streams, sockets, events', /^node:/],
];

const STARTUP = /^node:internal\/modules\//;

export interface Causes {
  /** ms of main-thread CPU per cause, over the profile (module loading at start left out) */
  ms: Map<Cause, number>;
  /** ms the main thread was busy (the sum of `ms`) */
  busyMs: number;
  /** ms spent loading modules (left out) */
  startupMs: number;
}

/** A profile's main-thread CPU by cause. */
export function causesOf(path: string): Causes {
  const p = JSON.parse(readFileSync(path, 'utf8')) as Profile;
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const causeOfNode = new Map<number, Cause | 'idle' | 'startup'>();
  const classify = (id: number): Cause | 'idle' | 'startup' => {
    const known = causeOfNode.get(id);
    if (known) return known;
    const leaf = byId.get(id)!.callFrame;
    let cause: Cause | 'idle' | 'startup' | null = null;
    if (leaf.functionName === '(idle)') cause = 'idle';
    else if (leaf.functionName === '(garbage collector)') cause = 'garbage collection';
    else if (leaf.functionName === 'writev' || leaf.functionName === 'writeUtf8String' || leaf.functionName === 'writeBuffer')
      cause = 'socket write (kernel, loopback)';
    for (let at: number | undefined = id; cause === null && at !== undefined; at = parent.get(at)) {
      const url = byId.get(at)!.callFrame.url;
      if (STARTUP.test(url)) cause = 'startup';
      else if (url) cause = RULES.find(([, re]) => re.test(url))?.[0] ?? 'V8 and natives, unattributed';
    }
    // Module loading anywhere below is start-up work, whatever the leaf.
    for (let at: number | undefined = id; cause !== 'startup' && at !== undefined; at = parent.get(at)) {
      if (STARTUP.test(byId.get(at)!.callFrame.url)) cause = 'startup';
    }
    const c = cause ?? 'V8 and natives, unattributed';
    causeOfNode.set(id, c);
    return c;
  };
  const ms = new Map<Cause, number>(CAUSES.map((c) => [c, 0]));
  let startupMs = 0;
  p.samples.forEach((id, i) => {
    const t = (p.timeDeltas[i] ?? 0) / 1000;
    const c = classify(id);
    if (c === 'startup') startupMs += t;
    else if (c !== 'idle') ms.set(c, ms.get(c)! + t);
  });
  return { ms, busyMs: [...ms.values()].reduce((a, b) => a + b, 0), startupMs };
}

/** Seconds a process's main thread has waited, runnable, for a core (/proc schedstat's second field). */
export function waitSeconds(pid: number): number {
  try {
    return Number(readFileSync(`/proc/${pid}/task/${pid}/schedstat`, 'utf8').split(' ')[1]) / 1e9;
  } catch {
    return 0;
  }
}

let ticks: number | null = null;
/** The kernel's clock ticks per second, in which /proc counts CPU time. */
const clockTicks = () => (ticks ??= Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100);

/**
 * CPU seconds a process has used so far (user and system), from /proc:
 * every thread's, or its main thread's alone (the thread whose id is the
 * process's).
 */
export function cpuSeconds(pid: number, mainThreadOnly = false): number {
  // Fields after the command (which may hold spaces) start after its closing parenthesis.
  const stat = readFileSync(mainThreadOnly ? `/proc/${pid}/task/${pid}/stat` : `/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // utime and stime are fields 14 and 15 of the whole line: 12 and 13 after the command.
  return (Number(f[11]) + Number(f[12])) / clockTicks();
}

/**
 * The main thread's native event-loop work outside JavaScript, sampled by
 * `perf` while the V8 profile runs: socket reads, the HTTP parser's C side,
 * buffer copies. Node marks the isolate idle from before the poll to after
 * its callbacks, so V8's profiler files these samples as "(idle)"; `perf`
 * sees them as CPU. Started before the load and stopped after it.
 */
export function startNativeSampling(pid: number, file: string): { stop: () => Promise<number | null> } {
  const p = spawn('perf', ['record', '-q', '-F', '997', '-g', '-t', String(pid), '-o', file], { stdio: 'ignore' });
  // No perf installed: spawn reports it as an 'error' event (and the child gets no pid), never an exit.
  p.on('error', () => {});
  return {
    async stop() {
      if (p.pid === undefined || p.exitCode !== null) return null;
      const exited = once(p, 'exit');
      p.kill('SIGINT');
      // perf writes its file on SIGINT; one that does not end is not waited for past 20 s.
      const stuck = setTimeout(() => p.kill('SIGKILL'), 20_000);
      const [code] = (await exited) as [number | null];
      clearTimeout(stuck);
      return code === 0 || p.signalCode === 'SIGINT' ? nativeShare(file) : null;
    },
  };
}

/** Of a perf recording's samples, the share under the event loop's poll with no JavaScript (and no garbage collection, which V8 counts itself) on the stack. */
export function nativeShare(file: string): number | null {
  let out: string;
  try {
    out = execFileSync('perf', ['script', '-i', file, '-F', 'ip,sym'], { encoding: 'utf8', maxBuffer: 1 << 30, stdio: ['ignore', 'pipe', 'ignore'] });
  } catch {
    return null;
  }
  let all = 0;
  let native = 0;
  for (const stack of out.split('\n\n')) {
    if (stack.trim() === '') continue;
    all++;
    if (/uv__io_poll/.test(stack) && !/JSEntry|v8::internal::Heap::/.test(stack)) native++;
  }
  return all > 0 ? native / all : null;
}
