/**
 * What a benchmark section hands back: a markdown table of figures and the
 * targets it checked (ratios measured in the same run, so they hold on a
 * noisy machine). The suite prints them and writes docs/benchmarks.md.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import type { Latency } from './workload.js';

export interface Target {
  /** what is compared, e.g. "Redis decisions/s vs redis-benchmark ceiling" */
  what: string;
  /** the measured figure, as printed */
  measured: string;
  /** the goal, as printed, e.g. "≥ 0.8×" */
  goal: string;
  met: boolean;
  /** when missed: why, and what is not ours to fix */
  note?: string;
}

export interface Section {
  title: string;
  /** paragraphs and tables, markdown */
  body: string[];
  targets: Target[];
}

export const int = (x: number) => (Number.isFinite(x) ? Math.round(x).toLocaleString('en-US') : 'n/a');
export const ratio = (a: number, b: number) => (b > 0 && Number.isFinite(a) ? a / b : NaN);
export const x = (r: number) => (Number.isFinite(r) ? `${r.toFixed(2)}×` : 'n/a');
export const lat = (l: Latency | null) => (l ? `${int(l.p50)} / ${int(l.p99)} / ${int(l.p999)}` : '—');

export function table(head: string[], rows: Array<Array<string | number>>): string {
  return [`| ${head.join(' | ')} |`, `| ${head.map(() => '---').join(' | ')} |`, ...rows.map((r) => `| ${r.join(' | ')} |`)].join('\n');
}

export function targetAtLeast(what: string, value: number, goal: number, note?: string): Target {
  const met = Number.isFinite(value) && value >= goal;
  return { what, measured: x(value), goal: `≥ ${goal}×`, met, ...(met || !note ? {} : { note }) };
}

export function targetAtMost(what: string, value: number, goal: number, unit: string, note?: string): Target {
  const met = Number.isFinite(value) && value <= goal;
  return { what, measured: `${value.toFixed(unit === 'µs' ? 0 : 1)} ${unit}`, goal: `≤ ${goal} ${unit}`, met, ...(met || !note ? {} : { note }) };
}

export function targetsTable(targets: Target[]): string {
  return table(
    ['target', 'measured', 'goal', 'met', 'when missed: why'],
    targets.map((t) => [t.what, t.measured, t.goal, t.met ? 'yes' : '**no**', t.note ?? '']),
  );
}

/** Replaces the figures between the suite's markers in docs/benchmarks.md; the prose around them stays. */
export function writeDoc(markdown: string): boolean {
  try {
    writeBetween('docs/benchmarks.md', 'suite', markdown);
    return true;
  } catch {
    return false;
  }
}

/** Replaces what stands between `<!-- bench:NAME begin -->` and `<!-- bench:NAME end -->` in a page of docs/ (path from the repository root). */
export function writeBetween(page: string, name: string, markdown: string): void {
  const path = new URL(`../${page}`, import.meta.url);
  const doc = readFileSync(path, 'utf8');
  const [begin, end] = [`<!-- bench:${name} begin -->`, `<!-- bench:${name} end -->`];
  const i = doc.indexOf(begin);
  const j = doc.indexOf(end);
  if (i < 0 || j < i) throw new Error(`${page} has no ${begin} … ${end} markers`);
  writeFileSync(path, `${doc.slice(0, i + begin.length)}\n${markdown}\n${doc.slice(j)}`);
}
