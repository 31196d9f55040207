/**
 * The workloads every benchmark shares, deterministic so runs compare, and
 * the two ways of driving them: one at a time (latency) and many in flight
 * (throughput).
 */
import type { DeviceEvent } from '../src/core/event.js';

export interface IncidentOp {
  key: string;
  fp: string;
}

/** A cheap deterministic hash of i into 0..99. */
const pick = (i: number) => (i * 2654435761) % 100;

/** Op i is new (50%), an unchanged re-fire (40%) or a change (10%) of an earlier key. */
export function incidentMix(n: number, prefix: string): IncidentOp[] {
  const ops: IncidentOp[] = [];
  let made = 0;
  for (let i = 0; i < n; i++) {
    const r = pick(i);
    if (made === 0 || r < 50) ops.push({ key: `dedup:${prefix}${made++}`, fp: 'MAJOR|0' });
    else ops.push({ key: `dedup:${prefix}${(i * 7919) % made}`, fp: r < 90 ? 'MAJOR|0' : 'CRITICAL|0' });
  }
  return ops;
}

/**
 * The same mix over a live set of `live` keys (`dedup:${livePrefix}${0..live-1}`,
 * loaded beforehand with fingerprint MAJOR|0): re-fires land anywhere in it,
 * so a large live set is read where it is cold, not only where it is hot.
 */
export function liveSetMix(n: number, prefix: string, live: number, livePrefix: string): IncidentOp[] {
  let seed = 0x9e3779b9 ^ live;
  const rand = () => {
    seed ^= seed << 13;
    seed ^= seed >>> 17;
    seed ^= seed << 5;
    return (seed >>> 0) / 2 ** 32;
  };
  return Array.from({ length: n }, (_, i) => {
    const r = pick(i);
    if (r < 50) return { key: `dedup:${prefix}${i}`, fp: 'MAJOR|0' };
    return { key: `dedup:${livePrefix}${Math.floor(rand() * live)}`, fp: r < 90 ? 'MAJOR|0' : 'CRITICAL|0' };
  });
}

/**
 * A device stream: devices report in turn; an event is the next sequence
 * (70%), a producer's retry of the last one (20%, a duplicate) or a jump of
 * three (10%, a gap).
 */
export function eventMix(n: number, prefix: string): DeviceEvent[] {
  const devices = Math.max(1, Math.floor(n / 50));
  const seq = new Array<number>(devices).fill(0);
  const t0 = Date.now();
  return Array.from({ length: n }, (_, i) => {
    const d = i % devices;
    const r = pick(i);
    if (r >= 70 && r < 90 && seq[d]! > 0) {
      // a retry of the last event: same identity
    } else seq[d] = seq[d]! + (r >= 90 ? 3 : 1);
    return { tenant: 'default', device: `${prefix}d${d}`, boot: 'b1', sequence: seq[d]!, state: seq[d]! % 7 === 0 ? 'DOWN' : 'UP', observedAt: t0 + i };
  });
}

/** Violation keys: a new window (50%) or a re-fire inside an earlier one (50%). */
export function violationMix(n: number, prefix: string): string[] {
  let made = 0;
  return Array.from({ length: n }, (_, i) => (made === 0 || pick(i) < 50 ? `${prefix}${made++}` : `${prefix}${(i * 7919) % made}`));
}

export const pct = (xs: number[], p: number) => {
  const s = Float64Array.from(xs).sort();
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
};

export interface Latency {
  p50: number;
  p99: number;
  p999: number;
}

/** Latency in µs, one operation at a time, after a warm-up on `warm`. */
export async function sequential<T>(run: (op: T) => unknown, ops: T[], warm: T[] = []): Promise<Latency> {
  for (const o of warm) await run(o);
  const lat = new Float64Array(ops.length);
  for (let i = 0; i < ops.length; i++) {
    const t = performance.now();
    await run(ops[i]!);
    lat[i] = (performance.now() - t) * 1000;
  }
  const xs = Array.from(lat);
  return { p50: pct(xs, 50), p99: pct(xs, 99), p999: pct(xs, 99.9) };
}

/** Operations per second with `inflight` in flight. */
export async function concurrent<T>(run: (op: T) => unknown, ops: T[], inflight: number): Promise<number> {
  let next = 0;
  const t = performance.now();
  await Promise.all(
    Array.from({ length: inflight }, async () => {
      while (next < ops.length) await run(ops[next++]!);
    }),
  );
  return Math.round(ops.length / ((performance.now() - t) / 1000));
}
