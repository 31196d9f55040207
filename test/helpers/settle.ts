import type { FastifyInstance } from 'fastify';
import { until } from './wait.js';

/**
 * Waits until a destination has had calls past `since` and the replica has
 * nothing left queued, with no new call between two looks 150 ms apart.
 */
export async function quietAfter(server: { app: FastifyInstance }, calls: () => number, since: number): Promise<void> {
  let last = -1;
  await until(async () => {
    const n = calls();
    const text = (await server.app.inject({ method: 'GET', url: '/metrics' })).body;
    const quiet = n > since && n === last && /^onceonly_deliveries_pending 0$/m.test(text);
    last = n;
    if (!quiet) await new Promise((r) => setTimeout(r, 150));
    return quiet;
  }, 15_000);
}
