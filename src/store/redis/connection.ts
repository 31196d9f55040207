import { createClient, createCluster, type RedisClientType, type RedisClusterType } from '@redis/client';
import type { LuaScript } from './scripts.js';

/**
 * What the store needs from Redis, for a single server and a cluster alike.
 * Commands never wait in an offline queue: while the connection is down they
 * fail at once, so fail-open can answer within its timeout and no stale
 * decision is replayed minutes later on reconnect.
 */
export interface RedisConnection {
  /** EVALSHA, and EVAL (which caches the script) only when the server answers NOSCRIPT. */
  evalScript(script: LuaScript, keys: string[], args: Array<string | number>): Promise<unknown>;
  ping(): Promise<void>;
  /** A PING on a connection of its own (single Redis), so it does not wait behind this replica's queued commands; absent: ping. */
  probe?(): Promise<void>;
  /** Keys matching `match`, SCANned on every master, up to about `max` of them: for the group sweep and the shard move, never a tenant's listing. */
  scan(match: string, max: number): Promise<string[]>;
  close(): Promise<void>;
  /** A raw command on the node that holds `key`: the facets' reads (the layout seam lets only reads through), the shard move's own writes, tests. */
  send(key: string, args: string[]): Promise<unknown>;
}

export interface RedisConnectionOptions {
  connectTimeoutMs?: number;
  /** Called with connection errors (the client reconnects on its own). */
  onError?: (err: Error) => void;
}

const reconnectStrategy = (retries: number) => Math.min(25 * 2 ** retries, 1000);

const isNoScript = (err: unknown) => err instanceof Error && err.message.startsWith('NOSCRIPT');

async function evalWith(
  send: (key: string, args: string[]) => Promise<unknown>,
  script: LuaScript,
  keys: string[],
  args: Array<string | number>,
): Promise<unknown> {
  const rest = [String(keys.length), ...keys, ...args.map(String)];
  try {
    return await send(keys[0]!, ['EVALSHA', script.sha, ...rest]);
  } catch (err) {
    if (!isNoScript(err)) throw err;
    return send(keys[0]!, ['EVAL', script.source, ...rest]);
  }
}

/** SCAN one node until the cursor is back at 0 or `max` keys were found. */
async function scanNode(send: (args: string[]) => Promise<unknown>, match: string, max: number): Promise<string[]> {
  const keys: string[] = [];
  let cursor = '0';
  do {
    const [next, found] = (await send(['SCAN', cursor, 'MATCH', match, 'COUNT', '1000'])) as [string, string[]];
    keys.push(...found);
    cursor = String(next);
  } while (cursor !== '0' && keys.length < max);
  return keys.slice(0, max);
}

export function redisConnection(url: string, opts: RedisConnectionOptions = {}): RedisConnection {
  const onError = opts.onError ?? (() => {});
  if (url.startsWith('redis+cluster://')) return clusterConnection(url, opts, onError);
  const main = singleClient(url, opts, onError);
  // Probes have a connection of their own: on the main one, a PING waits
  // behind every script this replica has pipelined (a 10,000-line batch),
  // and a busy replica would read its own queue as a store that is gone.
  // Redis serves connections in turn, so the probe's PING is answered
  // between the scripts. Its errors are the main connection's to report.
  const probe = singleClient(url, opts, () => {});
  return {
    evalScript: (script, keys, args) => evalWith(main.send, script, keys, args),
    send: main.send,
    async ping() {
      await main.send('', ['PING']);
    },
    async probe() {
      await probe.send('', ['PING']);
    },
    scan: (match, max) => scanNode((args) => main.send('', args), match, max),
    async close() {
      await Promise.all([main.close(), probe.close()]);
    },
  };
}

/** One client of a single Redis: commands, and a close that never waits on a server that is gone. */
function singleClient(url: string, opts: RedisConnectionOptions, onError: (err: Error) => void) {
  const client: RedisClientType = createClient({
    url,
    disableOfflineQueue: true,
    socket: { connectTimeout: opts.connectTimeoutMs ?? 2000, reconnectStrategy },
  });
  // Commands waiting for the first connection fail with the first error the
  // client reports meanwhile (refused, TLS handshake...): a replica that
  // starts while Redis is down or untrusted learns it at once, not after
  // the caller's deadline.
  let waiting: Array<(err: Error) => void> = [];
  client.on('error', (err: Error) => {
    onError(err);
    const fail = waiting;
    waiting = [];
    for (const reject of fail) reject(err);
  });
  // Not awaited here: the server starts (and fails open) while Redis is down.
  // Until the first connection, commands wait for it or for the next
  // connection error; after it, a lost connection fails commands at once.
  let first: Promise<unknown> | null = client.connect().then(
    () => (first = null),
    (err) => {
      onError(err);
      first = null;
    },
  );
  const firstConnection = (pending: Promise<unknown>) =>
    new Promise<unknown>((resolve, reject) => {
      waiting.push(reject);
      pending.then(resolve, reject).finally(() => (waiting = waiting.filter((r) => r !== reject)));
    });
  return {
    send: async (_key: string, args: string[]) => {
      if (first) await firstConnection(first);
      return client.sendCommand(args);
    },
    async close() {
      // Let a first connection in progress settle, or it would open after the close.
      if (first) await Promise.race([first, new Promise((r) => setTimeout(r, 200))]);
      // A graceful close waits for replies; with the server gone, stop reconnecting instead.
      if (client.isReady) await client.close();
      else if (client.isOpen) client.destroy();
    },
  };
}

function clusterConnection(url: string, opts: RedisConnectionOptions, onError: (err: Error) => void): RedisConnection {
  const hosts = url.slice('redis+cluster://'.length).split('/')[0]!.split(',').filter(Boolean);
  if (hosts.length === 0) throw new Error(`the cluster URL names no nodes: redis+cluster://host1:port1,host2:port2`);
  const cluster: RedisClusterType = createCluster({
    rootNodes: hosts.map((h) => ({ url: `redis://${h}` })),
    defaults: {
      disableOfflineQueue: true,
      socket: { connectTimeout: opts.connectTimeoutMs ?? 2000, reconnectStrategy },
    },
  });
  cluster.on('error', onError);
  let connecting: Promise<unknown> | null = null;
  // A cluster client must learn the slot map before it can route; retry that
  // until it succeeds instead of failing the whole process.
  const ensure = (): Promise<unknown> => {
    connecting ??= cluster.connect().catch((err) => {
      onError(err);
      connecting = null;
      throw err;
    });
    return connecting;
  };
  ensure().catch(() => {});
  const send = async (key: string, args: string[]) => {
    await ensure();
    return cluster.sendCommand(key, false, args);
  };
  return {
    evalScript: (script, keys, args) => evalWith(send, script, keys, args),
    send,
    async ping() {
      await ensure();
      await Promise.all(cluster.masters.map(async (m) => (await cluster.nodeClient(m)).sendCommand(['PING'])));
    },
    async scan(match, max) {
      await ensure();
      const per = await Promise.all(
        cluster.masters.map(async (m) => {
          const node = await cluster.nodeClient(m);
          return scanNode((args) => node.sendCommand(args), match, max);
        }),
      );
      return per.flat().slice(0, max);
    },
    async close() {
      if (!connecting) return;
      await Promise.race([connecting, new Promise((r) => setTimeout(r, 100))]).catch(() => {});
      try {
        cluster.destroy();
      } catch {
        // never connected: nothing to stop
      }
    },
  };
}
