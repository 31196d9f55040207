/**
 * What the long-running benchmarks (the soak, the scaling model) need around
 * a served onceonly: a webhook receiver that counts, a server's metrics, and
 * a wait for its deliveries to land.
 */
import { createServer } from 'node:http';
import { once } from 'node:events';

/** A webhook receiver on loopback that answers 204 and counts what it got. */
export async function startCountingSink() {
  let count = 0;
  const srv = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      count++;
      res.writeHead(204).end();
    });
  });
  srv.listen(0, '127.0.0.1');
  await once(srv, 'listening');
  return {
    url: `http://127.0.0.1:${(srv.address() as { port: number }).port}/hook`,
    count: () => count,
    close: () => new Promise((r) => srv.close(r)),
  };
}

const series = (name: string, flags: string) => new RegExp(`^${name}(?:\\{[^}]*\\})? ([\\d.e+-]+)$`, flags);

/** A metric's first series' value in a /metrics text (NaN when absent). */
export const metricValue = (text: string, name: string) => Number(series(name, 'm').exec(text)?.[1] ?? NaN);

/** The sum of a metric's series (all label sets). */
export const metricSum = (text: string, name: string) => [...text.matchAll(series(name, 'gm'))].reduce((a, m) => a + Number(m[1]), 0);

/** Waits until every delivery the server made so far has landed: nothing pending and no outbox lag. */
export async function drained(url: string, limitMs = 600_000) {
  const start = Date.now();
  for (;;) {
    const text = await (await fetch(`${url}/metrics`)).text();
    if (metricValue(text, 'onceonly_deliveries_pending') === 0 && metricValue(text, 'onceonly_outbox_lag_seconds') === 0) return;
    if (Date.now() - start > limitMs) throw new Error(`deliveries did not drain in ${limitMs / 1000} s`);
    await new Promise((r) => setTimeout(r, 250));
  }
}
