/**
 * Section: fields. What ticket field templates cost the delivery path: the
 * real worker and webhook adapter on a memory store, delivering N incident
 * creates to a loopback sink, with no templates and with five templated
 * fields (a lookup, a label, a condition, a filter, the summary cut), in
 * alternating rounds; and the render of those five alone, per delivery.
 * `npm run bench -- fields`.
 */
import { performance } from 'node:perf_hooks';
import { fieldRenderer } from '../../src/delivery/adapters/common.js';
import type { OutboxEntry } from '../../src/core/outbox.js';
import { deliveryHarness } from '../../test/helpers/delivery.js';
import { drainDelivered } from '../drain.js';
import { startCountingSink } from '../http/sink.js';
import { int, table, targetAtMost, type Section } from '../report.js';

const N = Number(process.env.FIELDS_N ?? 5000);
const ROUNDS = 5;
/** Five templated fields: a lookup, a label, a condition, a filter and a cut summary (the routes section uses them too). */
export const FIELDS = {
  queue: '{{ lookups.queues[labels.region] }}',
  ci: '{{ labels.element_id }}',
  urgency: '{% if severity == "CRITICAL" %}1{% else %}3{% endif %}',
  team: '{{ labels.team | upcase }}',
  short: '{{ summary | truncate: 80 }}',
};
export const LOOKUPS = { queues: { eu: 'NOC EU', us: 'NOC US' } };

async function deliveriesPerSecond(url: string, fields: Record<string, string> | null): Promise<number> {
  const h = deliveryHarness({ lookups: LOOKUPS, adapters: [{ name: 'hook', type: 'webhook', url, ...(fields ? { fields } : {}) }] });
  try {
    for (let i = 0; i < N; i++) {
      await h.incidents.decideIncident({
        element_id: `olt-${i}`,
        fault_class: 'LOS',
        root_cause_id: 'cut',
        severity: i % 10 === 0 ? 'CRITICAL' : 'MAJOR',
        summary: `OLT ${i} lost signal on its uplink`,
        labels: { region: i % 2 ? 'eu' : 'us', team: 'net' },
      });
    }
    const t = performance.now();
    const delivered = await drainDelivered(h, N);
    const s = (performance.now() - t) / 1000;
    return delivered / s;
  } finally {
    await h.close();
  }
}

/** µs to render the five fields for one entry (the part of a delivery the templates add). */
async function renderMicros(): Promise<number> {
  const render = fieldRenderer(FIELDS, { lookups: () => LOOKUPS });
  const entry: OutboxEntry = {
    tenant: 'default',
    kind: 'incident',
    action: 'create',
    key: 'dedup:0',
    severity: 'MAJOR',
    summary: 'OLT 7 lost signal on its uplink',
    data: { element_id: 'olt-7', labels: { region: 'eu', team: 'net' } },
    at: 0,
  };
  for (let i = 0; i < 2000; i++) await render(entry);
  const n = 20_000;
  const t = performance.now();
  for (let i = 0; i < n; i++) await render(entry);
  return ((performance.now() - t) * 1000) / n;
}

export async function fieldsSection(log: (s: string) => void): Promise<Section> {
  const sink = await startCountingSink();
  const url = sink.url;
  const plain: number[] = [];
  const templated: number[] = [];
  try {
    // A round of each first, not counted: the first deliveries of a process run colder code.
    await deliveriesPerSecond(url, null);
    await deliveriesPerSecond(url, FIELDS);
    for (let r = 0; r < ROUNDS; r++) {
      plain.push(await deliveriesPerSecond(url, null));
      templated.push(await deliveriesPerSecond(url, FIELDS));
      log(`fields round ${r + 1}: ${int(plain.at(-1)!)} deliveries/s plain, ${int(templated.at(-1)!)} with 5 templated fields`);
    }
  } finally {
    await sink.close();
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const [p, t] = [median(plain), median(templated)];
  const micros = await renderMicros();
  const loss = ((p - t) / p) * 100;
  // The render's share of one delivery's time at the plain rate: what the templates add, free of the rounds' noise.
  const share = (micros / (1e6 / p)) * 100;
  return {
    title: 'Ticket field templates on the delivery path',
    body: [
      `${int(N)} incident creates delivered by the real worker and webhook adapter (memory store, a loopback sink in the same process), without templates and with five templated fields on the adapter (a lookup, a label, a condition, a filter, a cut summary); median of ${ROUNDS} alternating rounds after one of each not counted. Rendering the five alone: ${micros.toFixed(1)} µs a delivery.`,
      table(
        ['', 'deliveries/s'],
        [
          ['no templates', int(p)],
          ['five templated fields', int(t)],
          ['change', `${loss >= 0 ? '−' : '+'}${Math.abs(loss).toFixed(1)}%`],
        ],
      ),
      `Every round, deliveries/s (plain / templated): ${plain.map((x, i) => `${int(x)} / ${int(templated[i]!)}`).join(', ')}. Rounds of one variant differ by up to ${int(Math.max(...plain) - Math.min(...plain))} deliveries/s on this machine, so the render's own time against a delivery's is the steadier figure: ${share.toFixed(1)}% of a delivery.`,
    ],
    targets: [
      targetAtMost("five templated fields' render time, as a share of one delivery's", share, 10, '%'),
      targetAtMost(
        'delivery throughput lost to five templated fields (median of rounds)',
        loss,
        10,
        '%',
        'the rounds are noisier than the render costs: see the share',
      ),
    ],
  };
}
