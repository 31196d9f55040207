import { execFile, execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { promisify } from 'node:util';
import { once } from 'node:events';
import { createInterface } from 'node:readline';

export interface WrkResult {
  /** requests completed */
  requests: number;
  rps: number;
  p50Ms: number;
  p99Ms: number;
  /** answers that were not 2xx or 3xx, and socket errors */
  errors: number;
  /** of those, answers that were not 2xx or 3xx */
  non2xx: number;
  /** of those, requests unanswered within the timeout */
  timeouts: number;
}

const toMs = (v: string, unit: string) => Number(v) * (unit === 'us' ? 0.001 : unit === 's' ? 1000 : 1);

function wrkArgs(url: string, script: string, seconds: number, args: string[], opts: { connections?: number; timeoutS?: number }) {
  const { connections = 64, timeoutS = 2 } = opts;
  return ['-t1', `-c${connections}`, `-d${seconds}s`, `--timeout`, `${timeoutS}s`, '--latency', '-s', script, url, '--', ...args];
}

function parseWrk(out: string): WrkResult {
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1]);
  const pctl = (p: string) => {
    const m = new RegExp(`^\\s+${p}%\\s+([\\d.]+)(us|ms|s)\\s*$`, 'm').exec(out);
    return m ? toMs(m[1]!, m[2]!) : NaN;
  };
  const non2xx = Number(/Non-2xx or 3xx responses:\s+(\d+)/.exec(out)?.[1] ?? 0);
  const sock = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(out);
  const errors = non2xx + (sock ? sock.slice(1).reduce((s, v) => s + Number(v), 0) : 0);
  if (!Number.isFinite(rps)) throw new Error(`wrk printed no rate:\n${out}`);
  return { requests: Number(/(\d+) requests in/.exec(out)?.[1]), rps, p50Ms: pctl('50'), p99Ms: pctl('99'), errors, non2xx, timeouts: Number(sock?.[4] ?? 0) };
}

/**
 * wrk from Debian's packages, one thread and 64 connections (by default; a
 * request unanswered after 2 s counts as failed): a C load generator on the
 * second core, where a Node one would take the server's.
 */
export function wrk(url: string, script: string, seconds: number, args: string[] = [], opts: { connections?: number; timeoutS?: number } = {}): WrkResult {
  return parseWrk(execFileSync('wrk', wrkArgs(url, script, seconds, args, opts), { encoding: 'utf8' }));
}

/** As wrk, without blocking this process's event loop (for a caller that serves something meanwhile). */
export async function wrkAsync(url: string, script: string, seconds: number, args: string[] = [], opts: { connections?: number; timeoutS?: number } = {}) {
  const { stdout } = await promisify(execFile)('wrk', wrkArgs(url, script, seconds, args, opts), { encoding: 'utf8' });
  return parseWrk(stdout);
}

export interface Listening {
  url: string;
  pid: number;
  stop(): Promise<void>;
}

/** Starts a process that prints `listening on URL` (as onceonly serve does) and waits for that line. */
export async function startListening(cmd: string, args: string[], env: Record<string, string> = {}, cwd?: string, timeoutMs = 20_000): Promise<Listening> {
  const proc: ChildProcess = spawn(cmd, args, {
    env: { ...process.env, LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    ...(cwd ? { cwd } : {}),
  });
  let err = '';
  proc.stderr!.on('data', (d) => (err += d));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      // Not left running behind the error: a server that never said where it listens serves nobody.
      proc.kill('SIGKILL');
      reject(new Error(`${cmd} ${args.join(' ')} did not listen in ${timeoutMs / 1000} s: ${err}`));
    }, timeoutMs);
    createInterface({ input: proc.stdout! }).on('line', (line) => {
      const m = /listening on (https?:\/\/[^"\s]+)/.exec(line);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    });
    proc.once('exit', (code) => reject(new Error(`${cmd} exited with ${code} before listening: ${err}`)));
  });
  return {
    url,
    pid: proc.pid!,
    async stop() {
      if (proc.exitCode !== null || proc.signalCode !== null) return;
      const exited = once(proc, 'exit');
      proc.kill('SIGTERM');
      await exited;
    },
  };
}
