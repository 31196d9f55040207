/**
 * Instructions per answer, counted by valgrind's callgrind: a server runs
 * under callgrind with counting off, takes WARM requests (so the JIT has
 * compiled the path), then counts over COUNTED requests only
 * (`callgrind_control -i on|off`), and the main thread's total is divided by
 * them. Unlike requests/s, an instruction count barely moves with a loaded
 * machine, so it is the figure a change to the path is guarded by. The
 * server's own timers tick meanwhile (about 3k instructions per answer at
 * the pace callgrind allows): counted, and the same for every server.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { tempDir } from '../../test/helpers/tmp.js';
import { startListening } from './wrk.js';

const WARM = 3000;
const COUNTED = 3000;
/** Requests in flight at once: a few, as keep-alive clients send them. */
const IN_FLIGHT = 8;

export interface Instructions {
  /** on the main thread (the event loop: JavaScript, parsing, the system calls' user side), per answer */
  main: number;
  /** every thread (V8's compiler and garbage collector helpers too), per answer */
  all: number;
}

/** POSTs `bodies` to /v1/incidents, IN_FLIGHT at a time over keep-alive; throws on any answer but 200. */
async function drive(url: string, bodies: readonly string[]): Promise<void> {
  const u = new URL(url);
  const agent = new Agent({ keepAlive: true, maxSockets: IN_FLIGHT });
  const one = (body: string) =>
    new Promise<void>((resolve, reject) => {
      const req = request(
        {
          agent,
          host: u.hostname,
          port: u.port,
          path: '/v1/incidents',
          method: 'POST',
          headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
        },
        (res) => {
          res.resume();
          res.on('end', () => (res.statusCode === 200 ? resolve() : reject(new Error(`answered ${res.statusCode}`))));
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  let next = 0;
  try {
    await Promise.all(
      Array.from({ length: IN_FLIGHT }, async () => {
        while (next < bodies.length) await one(bodies[next++]!);
      }),
    );
  } finally {
    agent.destroy();
  }
}

const totalOf = (file: string) => Number(/^totals: (\d+)/m.exec(readFileSync(file, 'utf8'))?.[1] ?? NaN);

/**
 * Instructions per answer of the server `args` starts (it must print
 * `listening on URL`), given the bodies to warm it with and to count over.
 */
export async function instructionsPerAnswer(cmd: string, args: string[], cwd: string, bodies: (n: number, prefix: string) => string[]): Promise<Instructions> {
  const dir = tempDir('onceonly-bench-callgrind-');
  const out = `${dir.path}/callgrind.out`;
  const srv = await startListening(
    'valgrind',
    ['--tool=callgrind', '--instr-atstart=no', '--separate-threads=yes', `--callgrind-out-file=${out}`, cmd, ...args],
    {},
    cwd,
    120_000,
  );
  const control = (...a: string[]) => {
    const r = spawnSync('callgrind_control', [...a, String(srv.pid)], { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`callgrind_control ${a.join(' ')}: ${r.stderr || r.stdout}`);
  };
  try {
    await drive(srv.url, bodies(WARM, `warm${process.pid}`));
    control('-i', 'on');
    await drive(srv.url, bodies(COUNTED, `count${process.pid}`));
    control('-i', 'off');
    control('-d');
    // One file per thread: callgrind.out.1-01 is the main thread.
    const files = readdirSync(dir.path).filter((f) => f.startsWith('callgrind.out.1-'));
    const main = files.find((f) => f.endsWith('-01'));
    if (!main) throw new Error(`callgrind wrote no main-thread file in ${dir.path}: ${files.join(', ')}`);
    const all = files.reduce((s, f) => s + totalOf(`${dir.path}/${f}`), 0);
    return { main: totalOf(`${dir.path}/${main}`) / COUNTED, all: all / COUNTED };
  } finally {
    await srv.stop();
    dir.remove();
  }
}
