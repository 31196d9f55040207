/**
 * A line chart as SVG, written by hand: a few series over one time axis,
 * each scaled to its own maximum (the legend gives the maxima), so growth of
 * any of them shows as a slope. No plotting dependency for one picture.
 */
export interface Series {
  name: string;
  unit: string;
  values: number[];
  color: string;
}

const W = 760;
const H = 300;
const PAD = { left: 50, right: 20, top: 20, bottom: 70 };

export function svgChart(title: string, minutes: number[], series: Series[], warmupMinutes: number): string {
  const plotW = W - PAD.left - PAD.right;
  const plotH = H - PAD.top - PAD.bottom;
  const tMax = Math.max(1e-9, ...minutes);
  const xOf = (t: number) => PAD.left + (t / tMax) * plotW;
  const yOf = (v: number, max: number) => PAD.top + plotH - (max > 0 ? (v / max) * plotH : 0);
  const lines = series.map((s) => {
    const max = Math.max(0, ...s.values.filter(Number.isFinite));
    const points = s.values.map((v, i) => `${xOf(minutes[i]!).toFixed(1)},${yOf(Number.isFinite(v) ? v : 0, max).toFixed(1)}`).join(' ');
    return { s, max, points };
  });
  const ticks = Array.from({ length: 6 }, (_, i) => (tMax * i) / 5);
  const legend = lines.map(
    ({ s, max }, i) =>
      `<g transform="translate(${PAD.left + (i % 3) * 240},${H - 38 + Math.floor(i / 3) * 16})"><rect width="12" height="3" y="-4" fill="${s.color}"/>` +
      `<text x="16" font-size="11">${esc(s.name)} (100% = ${fmt(max)} ${esc(s.unit)})</text></g>`,
  );
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif">`,
    `<rect width="${W}" height="${H}" fill="white"/>`,
    `<text x="${PAD.left}" y="14" font-size="13" font-weight="bold">${esc(title)}</text>`,
    `<rect x="${PAD.left}" y="${PAD.top}" width="${(xOf(Math.min(warmupMinutes, tMax)) - PAD.left).toFixed(1)}" height="${plotH}" fill="#f2f2f2"/>`,
    `<line x1="${PAD.left}" y1="${PAD.top + plotH}" x2="${W - PAD.right}" y2="${PAD.top + plotH}" stroke="#333"/>`,
    `<line x1="${PAD.left}" y1="${PAD.top}" x2="${PAD.left}" y2="${PAD.top + plotH}" stroke="#333"/>`,
    ...[0, 50, 100].map((p) => `<text x="${PAD.left - 6}" y="${yOf(p, 100) + 4}" font-size="10" text-anchor="end">${p}%</text>`),
    ...ticks.map((t) => `<text x="${xOf(t).toFixed(1)}" y="${PAD.top + plotH + 14}" font-size="10" text-anchor="middle">${t.toFixed(0)} min</text>`),
    ...lines.map(({ s, points }) => `<polyline fill="none" stroke="${s.color}" stroke-width="1.5" points="${points}"/>`),
    ...legend,
    `<text x="${W - PAD.right}" y="${PAD.top + 12}" font-size="10" text-anchor="end">grey: warm-up</text>`,
    '</svg>',
    '',
  ].join('\n');
}

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;');
const fmt = (v: number) => (v >= 100 ? Math.round(v).toLocaleString('en-US') : v.toFixed(v >= 10 ? 1 : 2));
