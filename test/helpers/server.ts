import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pino } from 'pino';
import { manualClock, type ManualClock } from '../../src/core/clock.js';
import { startServer, type RunningServer } from '../../src/app/start.js';
import { tempDir } from './tmp.js';

export interface InProcessServer extends RunningServer {
  clock: ManualClock;
  dir: string;
  /** Replaces the config file's text (what a reload then reads), keeping the journal line a shared store was given. */
  writeConfig(text: string): void;
  /** POST JSON through fastify's inject (no socket), returning status and parsed body. */
  post(url: string, body: unknown): Promise<{ status: number; body: any }>;
  get(url: string): Promise<{ status: number; body: any }>;
  del(url: string): Promise<{ status: number; body: any }>;
  stop(): Promise<void>;
}

/**
 * A real server on a free loopback port, with a manual clock and an optional
 * config. `store`: memory, a SQLite file of its own (the default), or any
 * store URL (a shared store's fail-open journal goes in the server's own
 * folder, so servers side by side never share one).
 */
export async function inProcessServer(
  opts: {
    store?: string;
    config?: string;
    dashboardIntervalMs?: number;
    sweepIntervalMs?: number;
    /** how often the heartbeat monitor checks on its own (tests that drive it by hand make this long) */
    heartbeatCheckMs?: number;
    /** where the manual clock starts (a restarted server goes on from the last one's time) */
    clockStart?: number;
  } = {},
): Promise<InProcessServer> {
  const dir = tempDir();
  // Redis keeps some times on its own clock (a silence's retention is a PXAT): the test's clock starts at
  // the real time there, so that it is not days behind Redis's.
  const clock = manualClock(opts.clockStart ?? (opts.store !== undefined && /^redis/.test(opts.store) ? Date.now() : undefined));
  let configPath: string | undefined;
  const configFile = join(dir.path, 'onceonly.yaml');
  const shared = opts.store !== undefined && /^(redis|rediss|redis\+cluster|postgres):/.test(opts.store);
  // A fail-open timeout a loaded 2-core machine does not trip by itself (the default 50 ms on Redis did, and a
  // GET answered 503): these servers are about other things; the fail-open tests make servers of their own.
  const journal = shared ? `failopen: { timeout_ms: 2000, journal_path: ${JSON.stringify(join(dir.path, 'journal.db'))} }\n` : '';
  if (opts.config !== undefined || shared) {
    configPath = configFile;
    writeFileSync(configPath, journal + (opts.config ?? ''));
  }
  const server = await startServer({
    port: 0,
    host: '127.0.0.1',
    store: opts.store === 'memory' ? 'memory:' : opts.store === undefined || opts.store === 'sqlite' ? `sqlite:${join(dir.path, 'onceonly.db')}` : opts.store,
    configPath,
    clock,
    logger: pino({ level: 'silent' }),
    dashboard: { intervalMs: opts.dashboardIntervalMs },
    ...(opts.sweepIntervalMs !== undefined ? { sweepIntervalMs: opts.sweepIntervalMs } : {}),
    ...(opts.heartbeatCheckMs !== undefined ? { heartbeatCheckMs: opts.heartbeatCheckMs } : {}),
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
    writeConfig: (text) => writeFileSync(configFile, journal + text),
    post: (url, body) => call('POST', url, body),
    get: (url) => call('GET', url),
    del: (url) => call('DELETE', url),
    async stop() {
      await server.close();
      dir.remove();
    },
  };
}
