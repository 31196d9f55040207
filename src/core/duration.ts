const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000, y: 31_536_000_000 };

/**
 * A duration as Prometheus, Alertmanager and amtool write it: `30s`, `5m`,
 * `1h30m`, `4h`, `1d`, `2w` (units from largest to smallest, each once).
 * Throws on anything else, and on zero; a caller bounds the length (a
 * duration past what a number holds exactly answers past any bound).
 */
export function parseDuration(text: string): number {
  const parts = [...text.matchAll(/(\d+)(ms|s|m|h|d|w|y)/g)];
  if (parts.length === 0 || parts.map((p) => p[0]).join('') !== text) throw new Error(`${JSON.stringify(text)} is not a duration (like 30s, 5m, 1h30m, 1d)`);
  const ms = parts.reduce((sum, p) => sum + Number(p[1]) * UNITS[p[2]!]!, 0);
  if (ms <= 0) throw new Error('a duration must be more than zero');
  return ms;
}

/** A duration in ms as the config writes it (`15m`, `1h30m`, `2s`, `250ms`): the largest units first. */
export function formatDuration(ms: number): string {
  const parts: string[] = [];
  let left = ms;
  for (const [unit, size] of Object.entries(UNITS).sort((a, b) => b[1] - a[1])) {
    if (left < size) continue;
    parts.push(`${Math.floor(left / size)}${unit}`);
    left %= size;
  }
  return parts.length > 0 ? parts.join('') : '0s';
}
