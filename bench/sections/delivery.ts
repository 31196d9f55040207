/**
 * Section: delivery. The outbox's side of the promise, measured two ways on
 * each store:
 *   - drain: N decisions' deliveries (fanned out, waiting) sent by the real
 *     delivery worker and webhook adapter to a receiver that answers 200 at
 *     once, against the baseline of a bare keep-alive client (Node's fetch)
 *     sending the same bodies at the same concurrency (the worker's 128) to
 *     the same receiver, in the same run;
 *   - latency: `onceonly serve` on the store, fed 1,000 new alerts a second
 *     for 10 s over HTTP; from each request's send to its create's arrival
 *     at the receiver, p50 and p99.
 * `npm run bench -- delivery` prints it. DELIVERY_N sets N (100,000).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { systemClock } from '../../src/core/clock.js';
import { configSchema } from '../../src/config/schema.js';
import { AdapterRegistry } from '../../src/delivery/registry.js';
import { DeliveryWorker } from '../../src/delivery/worker.js';
import type { DedupStore } from '../../src/store/contract/index.js';
import { openStore } from '../../src/store/open.js';
import { freshSchema, PG_URL } from '../../test/helpers/postgres.js';
import { spawnServer } from '../../test/helpers/process.js';
import { startRedis } from '../../test/helpers/redis.js';
import { tempDir } from '../../test/helpers/tmp.js';
import { int, type Section, table, x } from '../report.js';

const N = Number(process.env.DELIVERY_N ?? 100_000);
const IN_FLIGHT = 128;
/** Alerts a second the latency part sends (DELIVERY_RATE; 1,000): a trickle shows the wake-up, a flood the backlog. */
const RATE = Number(process.env.DELIVERY_RATE ?? 1000);
const SECONDS = 10;

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(p * s.length))] ?? NaN;
};

/** A receiver that answers 200 at once, counting calls and stamping each body's element at arrival. */
async function receiver(): Promise<{ url: string; calls: () => number; arrived: Map<string, number>; close: () => Promise<void> }> {
  let calls = 0;
  const arrived = new Map<string, number>();
  const server: Server = createServer((req, res) => {
    let raw = '';
    req.setEncoding('utf8');
    req.on('data', (c) => (raw += c));
    req.on('end', () => {
      calls++;
      const at = performance.timeOrigin + performance.now();
      try {
        const el = (JSON.parse(raw) as { data?: { element_id?: string } }).data?.element_id;
        if (el && !arrived.has(el)) arrived.set(el, at);
      } catch {}
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/in`;
  return { url, calls: () => calls, arrived, close: () => new Promise((r) => server.close(() => r())) };
}

interface Drain {
  store: string;
  workerMs: number;
  bareMs: number;
  delivered: number;
}

/** Fills the store with N creates' deliveries, then times the worker draining them and a bare client sending the same bodies. */
async function drain(name: string, store: DedupStore, log: (s: string) => void): Promise<Drain> {
  const rx = await receiver();
  const config = configSchema.parse({ adapters: [{ name: 'hook', type: 'webhook', url: rx.url, timeout_ms: 10_000 }] });
  const registry = new AdapterRegistry(() => config.adapters, { clock: systemClock, tickets: store.tickets, lookups: () => config.lookups });
  const worker = new DeliveryWorker({
    store: store.deliveries,
    adapters: () => registry.current(),
    policy: () => ({ maxRetries: 5, baseMs: 100, maxMs: 1000 }),
    leaseMs: 30_000,
    now: () => systemClock.now(),
    batch: IN_FLIGHT,
  });
  try {
    await store.init?.();
    log(`delivery: ${name}, filling ${int(N)} decisions`);
    const bodies: string[] = [];
    for (let i = 0; i < N; i += 256) {
      await Promise.all(
        Array.from({ length: Math.min(256, N - i) }, (_, j) => {
          const el = `el-${name}-${i + j}`;
          const outbox = { severity: 'MAJOR', summary: `fault at ${el}`, data: { element_id: el, fault_class: 'LINK_DOWN', root_cause_id: 'rc-1' } };
          if (bodies.length < N) bodies.push(JSON.stringify({ key: `dedup:${el}`, action: 'create', ...outbox }));
          return store.incidents.decide({ tenant: 'bench', key: `dedup:${el}`, fingerprint: 'MAJOR|0', ttlMs: 3_600_000, outbox });
        }),
      );
    }
    while ((await store.deliveries.fanOut(['hook'], 2000)) > 0);
    log(`delivery: ${name}, draining`);
    const t0 = performance.now();
    for (let n = await worker.runOnce(); n > 0 || rx.calls() < N; n = await worker.runOnce()) {
      if (n === 0) await new Promise((r) => setTimeout(r, 5));
      if (performance.now() - t0 > 600_000) throw new Error(`${name}: ${rx.calls()} of ${N} delivered after 10 minutes`);
    }
    const workerMs = performance.now() - t0;
    const delivered = rx.calls();
    // The baseline: the same bodies, the same concurrency, a bare keep-alive client.
    let next = 0;
    const b0 = performance.now();
    await Promise.all(
      Array.from({ length: IN_FLIGHT }, async () => {
        while (next < bodies.length) {
          const body = bodies[next++]!;
          const r = await fetch(rx.url, { method: 'POST', headers: { 'content-type': 'application/json', 'idempotency-key': 'k' }, body });
          await r.arrayBuffer();
        }
      }),
    );
    const bareMs = performance.now() - b0;
    log(`delivery: ${name}: worker ${workerMs.toFixed(0)} ms, bare client ${bareMs.toFixed(0)} ms`);
    return { store: name, workerMs, bareMs, delivered };
  } finally {
    await worker.stop();
    await registry.close();
    await store.close();
    await rx.close();
  }
}

interface Latency {
  store: string;
  sent: number;
  arrived: number;
  p50: number;
  p99: number;
}

/** `onceonly serve` on `storeUrl`, fed RATE new alerts a second for SECONDS s; send-to-arrival of each create. */
async function latency(name: string, storeUrl: string, log: (s: string) => void): Promise<Latency> {
  const rx = await receiver();
  const dir = tempDir('onceonly-bench-delivery-');
  const cfg = join(dir.path, 'c.yaml');
  const { writeFileSync } = await import('node:fs');
  writeFileSync(
    cfg,
    `adapters: [ { name: hook, type: webhook, url: "${rx.url}", timeout_ms: 10000 } ]\nfailopen: { journal_path: ${JSON.stringify(join(dir.path, 'j.db'))} }\n`,
  );
  const server = await spawnServer(['--port', '0', '--store', storeUrl, '--config', cfg]);
  const sentAt = new Map<string, number>();
  try {
    log(`delivery: ${name}, ${RATE} alerts a second for ${SECONDS} s`);
    const pending: Promise<unknown>[] = [];
    const t0 = performance.now();
    for (let i = 0; i < RATE * SECONDS; i++) {
      // Paced: request i goes at i / RATE seconds.
      const due = t0 + (i * 1000) / RATE;
      const wait = due - performance.now();
      if (wait > 1) await new Promise((r) => setTimeout(r, wait));
      const el = `lat-${name}-${i}`;
      sentAt.set(el, performance.timeOrigin + performance.now());
      pending.push(
        fetch(`${server.url}/v1/incidents`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ element_id: el, fault_class: 'LINK_DOWN', root_cause_id: 'rc-1', severity: 'MAJOR' }),
        }).then(
          (r) => r.arrayBuffer(),
          () => undefined,
        ),
      );
    }
    await Promise.all(pending);
    const until = Date.now() + 60_000;
    while (rx.arrived.size < sentAt.size && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
    const waits = [...rx.arrived].filter(([el]) => sentAt.has(el)).map(([el, at]) => at - sentAt.get(el)!);
    return { store: name, sent: sentAt.size, arrived: waits.length, p50: pct(waits, 0.5), p99: pct(waits, 0.99) };
  } finally {
    await server.stop('SIGTERM');
    await rx.close();
    dir.remove();
  }
}

export async function deliverySection(log: (s: string) => void): Promise<Section> {
  const drains: Drain[] = [];
  const lats: Latency[] = [];
  const dir = tempDir('onceonly-bench-delivery-');
  const redis = await startRedis();
  try {
    drains.push(await drain('memory', openStore('memory:', systemClock), log));
    drains.push(await drain('SQLite', openStore(`sqlite:${join(dir.path, 'd.db')}`, systemClock), log));
    drains.push(await drain('Redis', openStore(redis.url, systemClock), log));
    const pgDrain = await freshSchema();
    try {
      drains.push(await drain('Postgres', pgDrain.open(systemClock), log));
    } finally {
      await pgDrain.drop();
    }
    lats.push(await latency('memory', 'memory:', log));
    lats.push(await latency('SQLite', `sqlite:${join(dir.path, 'l.db')}`, log));
    lats.push(await latency('Redis', redis.url, log));
    const pgLat = await freshSchema();
    try {
      lats.push(await latency('Postgres', `${PG_URL}?schema=${pgLat.schema}`, log));
    } finally {
      await pgLat.drop();
    }
  } finally {
    await redis.stop();
    dir.remove();
  }
  const perSecond = (ms: number) => int((N * 1000) / ms);
  return {
    title: 'Delivery: the outbox draining, and arrival to receiver',
    body: [
      `Drain: ${int(N)} creates' deliveries waiting in the store, sent by the delivery worker (lease, gate, webhook adapter, settle; ${IN_FLIGHT} in flight) to a receiver on this machine that answers 200 at once, against a bare keep-alive client (Node's fetch) sending the same bodies at the same concurrency to the same receiver, in the same run.`,
      table(
        ['store', 'delivered', 'worker, deliveries/s', 'bare client, requests/s', 'worker vs bare'],
        drains.map((d) => [d.store, int(d.delivered), perSecond(d.workerMs), perSecond(d.bareMs), x(d.bareMs / d.workerMs)]),
      ),
      `Latency: \`onceonly serve\` on each store (default config, one webhook adapter), fed ${int(RATE)} new alerts a second for ${SECONDS} s over HTTP; from each request's send to its create's arrival at the receiver.`,
      table(
        ['store', 'sent', 'arrived', 'p50 ms', 'p99 ms'],
        lats.map((l) => [l.store, int(l.sent), int(l.arrived), l.p50.toFixed(1), l.p99.toFixed(1)]),
      ),
    ],
    targets: [],
  };
}
