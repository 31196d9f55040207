/**
 * Reads a V8 .cpuprofile (node --cpu-prof) and lists the frames with the most
 * self time: enough to see where a missed target goes. The file itself opens
 * as a flame graph in Chrome DevTools (Performance) or speedscope.
 */
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}

export function topFrames(path: string, count: number): string {
  let p: { nodes: ProfileNode[]; samples: number[]; timeDeltas: number[] };
  try {
    p = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    return `(no profile at ${path}: ${(err as Error).message})`;
  }
  const byNode = new Map<number, number>();
  p.samples.forEach((id, i) => {
    byNode.set(id, (byNode.get(id) ?? 0) + (p.timeDeltas[i] ?? 0));
  });
  const byFrame = new Map<string, number>();
  let total = 0;
  for (const n of p.nodes) {
    const t = byNode.get(n.id) ?? 0;
    total += t;
    const where = n.callFrame.url ? ` ${n.callFrame.url.replace(/^.*\/(node_modules|dist|src)\//, '$1/')}:${n.callFrame.lineNumber + 1}` : '';
    const k = `${n.callFrame.functionName || '(anonymous)'}${where}`;
    byFrame.set(k, (byFrame.get(k) ?? 0) + t);
  }
  return [...byFrame]
    .sort((a, b) => b[1] - a[1])
    .slice(0, count)
    .map(([k, t]) => `${((100 * t) / total).toFixed(1).padStart(5)}%  ${k}`)
    .join('\n');
}
