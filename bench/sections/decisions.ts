/**
 * Sections 1 and 5: the store's decision on every backend, beside the naive algorithm's
 * algorithm and the store's ceiling, and the device-event and violation
 * decisions on the same backends.
 */
import type { Backend } from '../backends/backend.js';
import { decide, OUTBOX, TENANT } from '../backends/backend.js';
import { int, lat, ratio, table, targetAtLeast, targetAtMost, x, type Section, type Target } from '../report.js';
import { concurrent, eventMix, incidentMix, sequential, violationMix, type Latency } from '../workload.js';

export interface Sizes {
  /** operations for a throughput figure */
  n: number;
  /** operations for a latency figure */
  seq: number;
}

interface Figures {
  name: string;
  inflight: number;
  seqOnce: Latency;
  seqNaive: Latency;
  seqCeil: Latency | null;
  once: number;
  naive: number;
  ceil: number;
  ceilLabel: string;
  extra: Array<{ label: string; rate: number }>;
  serverSide: Array<{ label: string; rate: number }>;
  events: { seq: Latency; rate: number };
  violations: { seq: Latency; rate: number };
}

const RETENTION_MS = 86_400_000;
const WINDOW_TTL_MS = 600_000;

/** Measures one backend, already open; closes it. */
export async function measureBackend(b: Backend, sizes: Sizes, log: (s: string) => void): Promise<Figures> {
  try {
    const run = decide(b.store);
    const p = b.name.replace(/\W/g, '');
    const warm = incidentMix(Math.min(2000, sizes.seq), `${p}w`);
    log(`${b.name}: sequential`);
    const seqOnce = await sequential(run, incidentMix(sizes.seq, `${p}so`), warm);
    const seqNaive = await sequential(b.naive, incidentMix(sizes.seq, `${p}ss`), warm);
    const seqCeil = b.ceiling.run ? await sequential(b.ceiling.run, incidentMix(sizes.seq, `${p}sc`), warm) : null;
    log(`${b.name}: concurrent, ${b.inflight} in flight`);
    const once = await concurrent(run, incidentMix(sizes.n, `${p}co`), b.inflight);
    const naive = await concurrent(b.naive, incidentMix(sizes.n, `${p}cs`), b.inflight);
    const ceil = b.ceiling.run ? await concurrent(b.ceiling.run, incidentMix(sizes.n, `${p}cc`), b.inflight) : b.ceiling.rate!(sizes.n * 2);
    const extra = [];
    for (const e of b.extra ?? []) extra.push({ label: e.label, rate: await concurrent(e.run, incidentMix(sizes.n, `${p}ce${extra.length}`), b.inflight) });
    if (b.serverSide) log(`${b.name}: the server alone`);
    const serverSide = b.serverSide?.() ?? [];

    log(`${b.name}: device events and violations`);
    const applyEvent = (e: ReturnType<typeof eventMix>[number]) => b.store.devices.apply(e, RETENTION_MS);
    const claim = (key: string) => b.store.windows.claim(TENANT, key, WINDOW_TTL_MS, OUTBOX);
    const events = {
      seq: await sequential(applyEvent, eventMix(sizes.seq, `${p}es`)),
      rate: await concurrent(applyEvent, eventMix(sizes.n, `${p}ec`), b.inflight),
    };
    const violations = {
      seq: await sequential(claim, violationMix(sizes.seq, `${p}vs`)),
      rate: await concurrent(claim, violationMix(sizes.n, `${p}vc`), b.inflight),
    };
    return {
      name: b.name,
      inflight: b.inflight,
      seqOnce,
      seqNaive,
      seqCeil,
      once,
      naive,
      ceil,
      ceilLabel: b.ceiling.label,
      extra,
      serverSide,
      events,
      violations,
    };
  } finally {
    await b.close();
  }
}

const SEED_NOTE =
  "the naive SET NX / GET / EXPIRE / SET are native commands Redis runs several times faster than any script (see the script ceiling), so no one-round-trip script can reach 2× them; onceonly's answer is the correct one under races, the naive one is not";

export function decisionsSection(all: Figures[], sizes: Sizes): Section {
  const rows = all.map((f) => [
    f.name,
    lat(f.seqOnce),
    lat(f.seqNaive),
    lat(f.seqCeil),
    `${int(f.once)} (${f.inflight})`,
    int(f.naive),
    `${int(f.ceil)}: ${f.ceilLabel}`,
    x(ratio(f.once, f.naive)),
    x(ratio(f.once, f.ceil)),
  ]);
  const clientRows = all.flatMap((f) =>
    f.extra.map((e) => `- ${f.name}: ${e.label}: ${int(e.rate)} decisions/s; the store's decision ${x(ratio(f.once, e.rate))} of it.`),
  );
  const serverRows = all.flatMap((f) => f.serverSide.map((e) => `- ${f.name}: ${e.label}: ${int(e.rate)}/s.`));
  const targets: Target[] = [];
  for (const f of all) {
    const isRedis = f.name.startsWith('redis');
    const why =
      f.name === 'postgres'
        ? "onceonly's decision is one function call under the key's advisory lock (ADRs 11, 13) that also writes the outbox row; the naive algorithm's racy statements take no lock and write no outbox, so they are cheaper and wrong under concurrency"
        : isRedis
          ? SEED_NOTE
          : f.name === 'memory'
            ? 'the naive baseline is a bare Map with no TTL, outbox or counters: the comparison measures what the contract costs in-process'
            : 'the naive baseline writes no outbox row and keeps no counters';
    targets.push(targetAtLeast(`${f.name}: decisions/s vs the naive algorithm`, ratio(f.once, f.naive), 2, why));
  }
  const redis = all.find((f) => f.name === 'redis');
  if (redis) {
    targets.push(
      targetAtLeast(
        'redis: in-process decisions/s vs redis-benchmark running the same script',
        ratio(redis.once, redis.ceil),
        0.8,
        'the client side (node-redis encoding and parsing, on one core shared with redis-server) is the limit',
      ),
    );
    targets.push(
      targetAtLeast(
        'redis: many decisions at once in-process (256 in flight) vs the naive algorithm',
        ratio(redis.once, redis.naive),
        1,
        'the decisions in flight go to Redis together, one decide-incidents call per turn of the event loop, but each is still the whole decision script per key, against native SET NX / GET / EXPIRE that Redis runs several times faster; the naive answer is also wrong under races',
      ),
    );
    targets.push(targetAtMost('redis: sequential decision p99', redis.seqOnce.p99, 250, 'µs', 'loopback round trip on a shared 2-core machine'));
  }
  const postgres = all.find((f) => f.name === 'postgres');
  const before = postgres?.extra[0];
  if (postgres && before) {
    const [fn, bare] = postgres.serverSide;
    const server = fn && bare ? ratio(fn.rate, bare.rate) : NaN;
    const serverWhy = `Postgres alone (pgbench, no Node) runs the function at ${x(server)} of the bare upsert, so the gap is the server's own work (the lock, a read, the upsert, the outbox row and the re-queue: five statements against one), not the client's`;
    targets.push(
      targetAtLeast(
        'postgres: decisions/s vs the same decision as separate statements',
        ratio(postgres.once, before.rate),
        3,
        `the round trips were the larger part of a decision, not all of it. ${serverWhy}`,
      ),
    );
    targets.push(targetAtLeast('postgres: decisions/s vs a bare INSERT … ON CONFLICT', ratio(postgres.once, postgres.ceil), 0.6, serverWhy));
  }
  const sqlite = all.find((f) => f.name === 'sqlite');
  if (sqlite) targets.push(targetAtLeast('sqlite: decisions/s vs a bare INSERT … ON CONFLICT loop', ratio(sqlite.once, sqlite.ceil), 0.8));
  return {
    title: 'Store decisions',
    body: [
      `Incident decisions straight on each store (no HTTP), the mix 50% new / 40% unchanged re-fire / 10% changed, every CREATE and UPDATE writing its outbox entry as the server does. Latency over ${int(sizes.seq)} decisions one at a time (µs: p50 / p99 / p999); throughput over ${int(sizes.n)} decisions (Postgres: a fifth) with the given number in flight.`,
      table(['store', 'onceonly, µs', 'naive algorithm, µs', 'ceiling, µs', 'onceonly/s (in flight)', 'naive/s', 'ceiling/s', 'vs naive', 'vs ceiling'], rows),
      ...(serverRows.length ? ['The server alone, driven by its own tool with no Node client (16 connections, 10 s):', serverRows.join('\n')] : []),
      ...(clientRows.length
        ? ['Beside the store, the same decision made another way (the Redis client was chosen by this measurement, ADR 6):', clientRows.join('\n')]
        : []),
    ],
    targets,
  };
}

export function eventsSection(all: Figures[]): Section {
  return {
    title: 'Device events and violations',
    body: [
      'Device events (70% next sequence, 20% a producer retry, 10% a jump that leaves a gap; one device in 50 events) through `applyEvent`, and violation windows (50% new, 50% a re-fire inside the window, with the outbox entry) through `claimWindow`, on the same stores.',
      table(
        ['store', 'event µs (p50 / p99 / p999)', 'events/s', 'violation µs (p50 / p99 / p999)', 'violations/s'],
        all.map((f) => [f.name, lat(f.events.seq), int(f.events.rate), lat(f.violations.seq), int(f.violations.rate)]),
      ),
    ],
    targets: [],
  };
}
