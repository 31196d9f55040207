/**
 * Section 3, the server's side: the resident memory of `onceonly serve` with
 * 1,000,000 live incidents, for each store (filled over HTTP with wrk; the
 * fill script stops adding keys at the limit, so the live set is exact).
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { startRedis } from '../../test/helpers/redis.js';
import { tempDir } from '../../test/helpers/tmp.js';
import { wrk } from '../http/wrk.js';
import { int, table, type Section } from '../report.js';
import { servedStores, serveOnceonly } from './http.js';

const FILL = fileURLToPath(new URL('../http/fill.lua', import.meta.url));
const LIVE = Number(process.env.RSS_KEYS ?? 1_000_000);

const rssMiB = (pid: number) => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;

/** The live count the server reports (on Redis, the database's key count: docs/configuration.md). */
async function liveIncidents(url: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  return Number(/^onceonly_incidents_live (\d+)/m.exec(text)?.[1] ?? NaN);
}

export async function serverMemorySection(log: (s: string) => void): Promise<Section> {
  const dir = tempDir('onceonly-bench-rss-');
  const redis = await startRedis();
  const rows: Array<Array<string | number>> = [];
  try {
    for (const [name, store] of servedStores(dir.path, redis.url)) {
      const srv = await serveOnceonly(store, dir.path, `rss-${name}`);
      try {
        const empty = rssMiB(srv.pid);
        // Every answered request created the next key until the limit (fill.lua), all 2xx.
        let live = 0;
        for (let round = 0; live < LIVE && round < 20; round++) {
          const r = wrk(srv.url, FILL, 15, [String(live), String(LIVE)]);
          if (r.errors) throw new Error(`${r.errors} fill requests failed on the ${name} store`);
          live = Math.min(LIVE, live + r.requests);
          log(`memory: ${name} store, ${int(live)} live incidents`);
        }
        const reported = await liveIncidents(srv.url);
        const rss = rssMiB(srv.pid);
        const redisMiB =
          name === 'redis' ? `; redis-server used_memory ${(Number(/used_memory:(\d+)/.exec(redis.cli('INFO', 'memory'))![1]) / 2 ** 20).toFixed(0)} MiB` : '';
        rows.push([
          name,
          `${int(live)} (server says ${int(reported)})`,
          empty.toFixed(0),
          rss.toFixed(0),
          `${(((rss - empty) * 2 ** 20) / live).toFixed(0)}${redisMiB}`,
        ]);
      } finally {
        await srv.stop();
      }
    }
  } finally {
    await redis.stop();
    dir.remove();
  }
  return {
    title: 'Server memory at 1,000,000 live incidents',
    body: [
      `\`onceonly serve\` filled over HTTP (\`bench/http/fill.lua\`) to ${int(LIVE)} live incidents; RSS from /proc when it started and when full. The memory store keeps every incident in the process; SQLite keeps them in its file and page cache; Redis in redis-server.`,
      table(['store', 'live incidents', 'RSS empty, MiB', 'RSS full, MiB', 'RSS bytes per live incident'], rows),
    ],
    targets: [],
  };
}
