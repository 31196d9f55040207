/**
 * The decision workload every store benchmark shares: op i is new (50%), an
 * unchanged re-fire (40%) or a change (10%) of an earlier key, spread
 * deterministically so runs compare.
 */
export function mix(n: number, prefix: string) {
  const ops: Array<{ key: string; fp: string }> = [];
  let made = 0;
  for (let i = 0; i < n; i++) {
    const r = (i * 2654435761) % 100;
    if (made === 0 || r < 50) ops.push({ key: `dedup:${prefix}${made++}`, fp: 'MAJOR|0' });
    else ops.push({ key: `dedup:${prefix}${(i * 7919) % made}`, fp: r < 90 ? 'MAJOR|0' : 'CRITICAL|0' });
  }
  return ops;
}

export const pct = (xs: number[], p: number) => {
  const s = Float64Array.from(xs).sort();
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
};

export type Decide = (key: string, fp: string) => Promise<unknown>;

/** Latency, µs, one decision at a time, after a warm-up. */
export async function sequential(run: Decide, n: number, prefix: string) {
  const ops = mix(n, prefix);
  for (const o of ops.slice(0, Math.min(2000, n / 10))) await run(o.key + 'w', o.fp);
  const lat: number[] = [];
  for (const o of ops) {
    const t = performance.now();
    await run(o.key, o.fp);
    lat.push((performance.now() - t) * 1000);
  }
  return { p50: pct(lat, 50), p99: pct(lat, 99), p999: pct(lat, 99.9) };
}

/** Decisions per second with `inflight` in flight. */
export async function concurrent(run: Decide, n: number, inflight: number, prefix: string) {
  const ops = mix(n, prefix);
  let next = 0;
  const t = performance.now();
  await Promise.all(
    Array.from({ length: inflight }, async () => {
      while (next < ops.length) {
        const o = ops[next++]!;
        await run(o.key, o.fp);
      }
    }),
  );
  return Math.round(ops.length / ((performance.now() - t) / 1000));
}

/** Replaces the text between `<!-- bench:NAME begin -->` and `<!-- bench:NAME end -->` in docs/benchmarks.md. */
export async function writeSection(name: string, table: string) {
  const { readFileSync, writeFileSync } = await import('node:fs');
  const docPath = new URL('../docs/benchmarks.md', import.meta.url);
  const doc = readFileSync(docPath, 'utf8');
  const begin = `<!-- bench:${name} begin -->`;
  const end = `<!-- bench:${name} end -->`;
  const i = doc.indexOf(begin);
  const j = doc.indexOf(end);
  if (i < 0 || j < i) return false;
  writeFileSync(docPath, doc.slice(0, i + begin.length) + '\n' + table + '\n' + doc.slice(j));
  return true;
}
