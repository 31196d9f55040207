import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));
/** The built CLI, as `npm start` and the `onceonly` bin run it (npm test builds first). */
export const CLI = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));

export interface ServerProcess {
  url: string;
  proc: ChildProcess;
  /** stdout lines so far */
  lines: string[];
  stderr: () => string;
  /** Sends the signal and waits for the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/** Starts `onceonly serve ARGS` (the built CLI, or `cli`: another install's) and resolves once it printed its listening line. */
export function spawnServer(args: string[], env: Record<string, string> = {}, cli = CLI): Promise<ServerProcess> {
  const proc = spawn(process.execPath, [cli, 'serve', ...args], {
    cwd: REPO_ROOT,
    env: { ...process.env, LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return watchServer(proc);
}

/** A process that runs `onceonly serve` however it was started (stdout and stderr piped), once it printed its listening line. */
export async function watchServer(proc: ChildProcess): Promise<ServerProcess> {
  const lines: string[] = [];
  let err = '';
  proc.stderr!.on('data', (d) => (err += d));
  const rl = createInterface({ input: proc.stdout! });
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start in 15 s; stderr: ${err}`)), 15_000);
    rl.on('line', (line) => {
      lines.push(line);
      const m = /listening on (https?:\/\/\S+?)"/.exec(line);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    });
    proc.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code} before listening; stderr: ${err}`));
    });
  });
  return {
    url,
    proc,
    lines,
    stderr: () => err,
    async stop(signal = 'SIGTERM') {
      if (proc.exitCode !== null || proc.signalCode !== null) return proc.exitCode;
      const exited = once(proc, 'exit');
      proc.kill(signal);
      // A replica that does not stop is a finding, not a test that hangs until the runner's timeout.
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<'late'>((r) => (timer = setTimeout(() => r('late'), 30_000)));
      const first = await Promise.race([exited, late]);
      clearTimeout(timer);
      if (first === 'late') {
        proc.kill('SIGKILL');
        await exited;
        // What it said about its drain (each step logs as it begins), then its last lines.
        const drain = lines.filter((l) => /"msg":"(drain|draining and shutting down)"/.test(l)).slice(-10);
        throw new Error(
          `the server did not exit within 30 s of ${signal}; its drain:\n${drain.join('\n')}\nits last lines:\n${lines.slice(-5).join('\n')}\n${err.slice(-2000)}`,
        );
      }
      const [code] = first as [number | null];
      return code;
    },
  };
}

/** Runs the CLI to completion. */
export function runCli(args: string[], input?: string, env: Record<string, string> = {}) {
  const r = spawnSync(process.execPath, [CLI, ...args], {
    cwd: REPO_ROOT,
    input,
    env: { ...process.env, ...env },
    encoding: 'utf8',
    timeout: 20_000,
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

export async function postJson(url: string, body: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}
