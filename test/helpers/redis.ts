import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { after, before } from 'node:test';
import { once } from 'node:events';
import { freePort } from './free-port.js';
import { tempDir } from './tmp.js';
import { evenSlotRanges } from './slots.js';

export { freePort } from './free-port.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function cli(port: number, ...args: string[]) {
  return spawnSync('redis-cli', ['-h', '127.0.0.1', '-p', String(port), ...args], { encoding: 'utf8', timeout: 10_000 });
}

async function waitFor(what: string, ok: () => boolean, ms = 10_000): Promise<void> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if (ok()) return;
    await sleep(50);
  }
  throw new Error(`timed out waiting for ${what}`);
}

export interface RedisServer {
  port: number;
  url: string;
  readonly pid: number;
  /** Sends a signal to the server process (SIGKILL to crash it, SIGSTOP to pause it). */
  kill(signal: NodeJS.Signals): Promise<void>;
  /** Starts a fresh, empty server on the same port. */
  restart(): Promise<void>;
  cli(...args: string[]): string;
  stop(): Promise<void>;
}

// These servers keep nothing on disk on purpose (restart() empties one, which is what fault tests restart
// them for), and a server refuses such a Redis unless told it may lose data: the tests' and benches'
// servers are told. The test of that check unsets it for its own.
process.env.ONCEONLY_REDIS_ACCEPT_DATA_LOSS ??= '1';

/** A redis-server of the test's own on a free port, no persistence, stopped by PID. */
export async function startRedis(extra: string[] = []): Promise<RedisServer> {
  const port = await freePort();
  const dir = tempDir('onceonly-redis-');
  let proc: ChildProcess;
  const launch = async () => {
    proc = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir.path, ...extra], {
      stdio: 'ignore',
    });
    await waitFor(`redis-server on ${port}`, () => cli(port, 'PING').stdout.trim() === 'PONG');
  };
  await launch();
  const server: RedisServer = {
    port,
    url: `redis://127.0.0.1:${port}`,
    get pid() {
      return proc.pid!;
    },
    async kill(signal) {
      // A server already gone has fired its exit: waiting for another would wait for ever (two overlapping
      // restarts of one server in the nemesis did).
      if (proc.exitCode !== null || proc.signalCode !== null) return;
      const exited = signal === 'SIGKILL' || signal === 'SIGTERM' ? once(proc, 'exit') : null;
      proc.kill(signal);
      await exited;
    },
    restart: launch,
    cli: (...args) => cli(port, ...args).stdout.trim(),
    async stop() {
      if (proc.exitCode === null && proc.signalCode === null) {
        proc.kill('SIGCONT');
        const exited = once(proc, 'exit');
        proc.kill('SIGKILL');
        await exited;
      }
      dir.remove();
    },
  };
  return server;
}

export interface RedisCluster {
  url: string;
  nodes: RedisServer[];
  stop(): Promise<void>;
}

/** A local Redis Cluster of `masters` masters and no replicas, formed with redis-cli (by hand below 3 masters, which redis-cli refuses). */
export async function startRedisCluster(masters = 3): Promise<RedisCluster> {
  const nodes: RedisServer[] = [];
  try {
    for (let i = 0; i < masters; i++) {
      nodes.push(await startRedis(['--cluster-enabled', 'yes', '--cluster-config-file', `nodes.conf`, '--cluster-node-timeout', '2000']));
    }
    if (masters >= 3) {
      const create = spawnSync('redis-cli', ['--cluster', 'create', ...nodes.map((n) => `127.0.0.1:${n.port}`), '--cluster-replicas', '0', '--cluster-yes'], {
        encoding: 'utf8',
        timeout: 30_000,
      });
      if (create.status !== 0) throw new Error(`redis-cli --cluster create failed: ${create.stdout}${create.stderr}`);
    } else {
      // redis-cli will not make a cluster of fewer than 3 masters; Redis itself will: the same slot ranges, by hand.
      for (const [i, [lo, hi]] of evenSlotRanges(masters).entries()) nodes[i]!.cli('CLUSTER', 'ADDSLOTSRANGE', String(lo), String(hi));
      for (const n of nodes.slice(1)) nodes[0]!.cli('CLUSTER', 'MEET', '127.0.0.1', String(n.port));
    }
    await waitFor('cluster_state:ok on every node', () => nodes.every((n) => n.cli('CLUSTER', 'INFO').includes('cluster_state:ok')), 20_000);
  } catch (err) {
    await Promise.all(nodes.map((n) => n.stop()));
    throw err;
  }
  return {
    url: `redis+cluster://${nodes.map((n) => `127.0.0.1:${n.port}`).join(',')}`,
    nodes,
    stop: async () => {
      await Promise.all(nodes.map((n) => n.stop()));
    },
  };
}

/**
 * A single redis-server and a 3-master cluster of the suite's own: started
 * in a `before`, stopped by PID in an `after`. Read them inside tests.
 */
export function singleAndCluster(): { readonly single: RedisServer; readonly cluster: RedisCluster } {
  const servers = {} as { single: RedisServer; cluster: RedisCluster };
  before(async () => {
    [servers.single, servers.cluster] = await Promise.all([startRedis(), startRedisCluster(3)]);
  });
  after(async () => {
    await Promise.all([servers.single?.stop(), servers.cluster?.stop()]);
  });
  return servers;
}
