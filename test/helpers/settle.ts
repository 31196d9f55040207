import type { FastifyInstance } from 'fastify';
import { until } from './wait.js';

/** A replica: in this process (its fastify app), or a process of its own (its URL). */
type Replica = { app: FastifyInstance } | { url: string };

const metricsOf = async (r: Replica) =>
  'app' in r ? (await r.app.inject({ method: 'GET', url: '/metrics' })).body : await (await fetch(`${r.url}/metrics`)).text();
/**
 * Waits until a destination has had calls past `since` and the replica has
 * nothing left queued, with no new call between two looks 150 ms apart.
 */
export async function quietAfter(server: { app: FastifyInstance }, calls: () => number, since: number): Promise<void> {
  let last = -1;
  await until(async () => {
    const n = calls();
    const text = await metricsOf(server);
    const quiet = n > since && n === last && /^onceonly_deliveries_pending 0$/m.test(text);
    last = n;
    if (!quiet) await new Promise((r) => setTimeout(r, 150));
    return quiet;
  }, 15_000);
}

/**
 * For checks that something did NOT happen: waits until the receiver has had
 * no call for `quietMs`, measured at the receiver (from its last call's
 * arrival, or from now when it has none since). A busy receiver extends the
 * wait; a quiet one ends it at once, where a fixed sleep would guess. Throws
 * after `maxMs` if it never goes quiet.
 */
export async function receiverQuiet(requests: () => ReadonlyArray<{ at: number }>, quietMs = 500, maxMs = 30_000): Promise<void> {
  const from = Date.now();
  await until(
    () => Date.now() - Math.max(from, requests().at(-1)?.at ?? 0) >= quietMs,
    maxMs,
    () => `the receiver was still busy (${requests().length} calls)`,
  );
}

const idlePasses = async (r: Replica) => Number(/^onceonly_delivery_idle_passes_total (\d+)/m.exec(await metricsOf(r))?.[1] ?? Number.NaN);

/**
 * For checks that something did NOT happen, on a positive signal: waits for
 * two delivery passes, counted from now, that found the worker caught up
 * (nothing due, no call in flight). The first may have begun before the
 * call of interest; the second began after it, fanned out what that call
 * decided and found nothing due, so whatever it made deliverable has reached
 * its receiver. What a mute holds, or a time not yet come, stays out.
 */
export async function caughtUp(servers: Replica | ReadonlyArray<Replica>, maxMs = 15_000): Promise<void> {
  const all: ReadonlyArray<Replica> = Array.isArray(servers) ? servers : [servers as Replica];
  const from = await Promise.all(all.map(idlePasses));
  if (from.some(Number.isNaN)) throw new Error('a server exports no onceonly_delivery_idle_passes_total');
  // Every replica's worker: any of them may hold the delivery still to come.
  await until(
    async () => (await Promise.all(all.map(idlePasses))).every((n, i) => n >= from[i]! + 2) || null,
    maxMs,
    () => 'a delivery worker never caught up',
  );
}
