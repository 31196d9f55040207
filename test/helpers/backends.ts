import { after, before } from 'node:test';
import { startSink, type FakeServer } from '../fakes/http-fake.js';
import { freshSchema } from './postgres.js';
import { PG_URL } from './postgres.js';
import { startRedis, startRedisCluster, type RedisCluster, type RedisServer } from './redis.js';

/** Every store a server can run on, for suites that must hold on each. */
export const BACKENDS = ['memory', 'sqlite', 'redis', 'redis-cluster', 'postgres'] as const;
export type Backend = (typeof BACKENDS)[number];

/** Redis decides TTLs on its own clock (TIME in its scripts); the others on the server's injected clock. */
export const storeKeepsItsOwnTime = (b: Backend) => b === 'redis' || b === 'redis-cluster';

/**
 * Empty stores of one backend for a suite's servers, one after another: a
 * redis-server (or a 3-master cluster) of the suite's own, emptied before each
 * server; a Postgres schema of its own for each server. `start` in a `before`,
 * `stop` in an `after`.
 */
export function backendStores(backend: Backend) {
  let redis: RedisServer | undefined;
  let cluster: RedisCluster | undefined;
  const schemas: Array<Awaited<ReturnType<typeof freshSchema>>> = [];
  return {
    async start(): Promise<void> {
      if (backend === 'redis') redis = await startRedis();
      if (backend === 'redis-cluster') cluster = await startRedisCluster(3);
    },
    /** A store URL with nothing in it (the server before it must have stopped). */
    async fresh(): Promise<string> {
      if (redis) {
        redis.cli('FLUSHALL');
        return redis.url;
      }
      if (cluster) {
        for (const n of cluster.nodes) n.cli('FLUSHALL');
        return cluster.url;
      }
      if (backend === 'postgres') {
        const s = await freshSchema();
        schemas.push(s);
        return `${PG_URL}?schema=${s.schema}`;
      }
      return backend;
    },
    async stop(): Promise<void> {
      await Promise.all([redis?.stop(), cluster?.stop(), ...schemas.map((s) => s.drop())]);
    },
  };
}

/**
 * In the calling `describe`: the backend's stores and a receiver answering
 * 200 to every call, started before its tests (the receiver handed to
 * `got`) and stopped after them. Returns the stores.
 */
export function backendWithSink(backend: Backend, got: (hook: FakeServer) => void) {
  const stores = backendStores(backend);
  let hook: FakeServer | undefined;
  before(async () => {
    await stores.start();
    hook = await startSink(200, {});
    got(hook);
  });
  after(async () => {
    await hook?.close();
    await stores.stop();
  });
  return stores;
}
