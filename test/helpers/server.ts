import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pino } from 'pino';
import { manualClock, type ManualClock } from '../../src/core/clock.js';
import { startServer, type RunningServer } from '../../src/app/start.js';
import { tempDir } from './tmp.js';

export interface InProcessServer extends RunningServer {
  clock: ManualClock;
  dir: string;
  /** POST JSON through fastify's inject (no socket), returning status and parsed body. */
  post(url: string, body: unknown): Promise<{ status: number; body: any }>;
  get(url: string): Promise<{ status: number; body: any }>;
  del(url: string): Promise<{ status: number; body: any }>;
  stop(): Promise<void>;
}

/** A real server on a free loopback port, with a manual clock and an optional config. */
export async function inProcessServer(opts: { store?: 'memory' | 'sqlite'; config?: string; dashboardIntervalMs?: number } = {}): Promise<InProcessServer> {
  const dir = tempDir();
  const clock = manualClock();
  let configPath: string | undefined;
  if (opts.config !== undefined) {
    configPath = join(dir.path, 'onceonly.yaml');
    writeFileSync(configPath, opts.config);
  }
  const server = await startServer({
    port: 0,
    host: '127.0.0.1',
    store: opts.store === 'memory' ? 'memory:' : `sqlite:${join(dir.path, 'onceonly.db')}`,
    configPath,
    clock,
    logger: pino({ level: 'silent' }),
    dashboard: { intervalMs: opts.dashboardIntervalMs },
  });
  const parse = (payload: string) => (payload ? JSON.parse(payload) : null);
  const call = async (method: 'GET' | 'POST' | 'DELETE', url: string, body?: unknown) => {
    const res = await server.app.inject({ method, url, ...(body === undefined ? {} : { payload: body as object }) });
    return { status: res.statusCode, body: parse(res.payload) };
  };
  return {
    ...server,
    clock,
    dir: dir.path,
    post: (url, body) => call('POST', url, body),
    get: (url) => call('GET', url),
    del: (url) => call('DELETE', url),
    async stop() {
      await server.close();
      dir.remove();
    },
  };
}
