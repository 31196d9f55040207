/**
 * A PostgreSQL server of a test's own: a fresh cluster (initdb) on a free
 * port, for the faults the machine's shared server must not take (a crash
 * with `pg_ctl stop -m immediate`, and its start again with crash recovery).
 * Postgres refuses to run as root, so as root its commands run as the
 * `postgres` user the package made.
 */
import { spawnSync } from 'node:child_process';
import { chownSync, existsSync, readdirSync, rmSync } from 'node:fs';
import { userInfo } from 'node:os';
import { join } from 'node:path';
import { freePort } from './free-port.js';
import { tempDir } from './tmp.js';

export interface PostgresServer {
  port: number;
  /** `postgres://postgres@127.0.0.1:PORT/postgres` */
  url: string;
  /** Stops it as a crash does (`pg_ctl stop -m immediate`: no checkpoint; the next start recovers from the WAL). */
  crash(): Promise<void>;
  /** Starts it again on the same data and port, and waits until it takes connections. */
  start(): Promise<void>;
  stop(): Promise<void>;
}

/** The newest installed server's bin directory (Debian keeps them under /usr/lib/postgresql/<major>/bin). */
function binDir(): string {
  const root = '/usr/lib/postgresql';
  const majors = existsSync(root) ? readdirSync(root).filter((d) => /^\d+$/.test(d)) : [];
  const major = majors.sort((a, b) => Number(b) - Number(a))[0];
  if (!major) throw new Error(`no PostgreSQL server under ${root}: install postgresql`);
  return join(root, major, 'bin');
}

const asRoot = userInfo().uid === 0;

/** Runs one of the server's programs, as `postgres` when this is root; throws with its output on failure. */
function run(program: string, args: string[]): void {
  const cmd = join(binDir(), program);
  const r = asRoot
    ? spawnSync('runuser', ['-u', 'postgres', '--', cmd, ...args], { encoding: 'utf8', timeout: 60_000 })
    : spawnSync(cmd, args, { encoding: 'utf8', timeout: 60_000 });
  if (r.status !== 0) throw new Error(`${program} ${args.join(' ')} failed (${r.status}): ${r.stdout}${r.stderr}`);
}

export async function startPostgres(): Promise<PostgresServer> {
  const dir = tempDir('onceonly-pg-');
  const data = join(dir.path, 'data');
  if (asRoot) {
    const pgUser = spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' });
    const pgGroup = spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' });
    chownSync(dir.path, Number(pgUser.stdout.trim()), Number(pgGroup.stdout.trim()));
  }
  // No fsync skipped: a crash must keep what was committed, as a real server's does.
  run('initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '-E', 'UTF8', '--no-instructions']);
  const port = await freePort();
  const options = `-p ${port} -c listen_addresses=127.0.0.1 -c unix_socket_directories=${dir.path} -c max_connections=200`;
  const start = async () => run('pg_ctl', ['-D', data, '-o', options, '-l', join(dir.path, 'log'), '-w', '-t', '60', 'start']);
  await start();
  let running = true;
  return {
    port,
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    async crash() {
      if (!running) return;
      run('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']);
      running = false;
    },
    async start() {
      if (running) return;
      await start();
      running = true;
    },
    async stop() {
      if (running) run('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']);
      running = false;
      rmSync(dir.path, { recursive: true, force: true });
    },
  };
}
