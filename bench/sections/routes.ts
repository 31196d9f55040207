/**
 * Section: routes. What a routing tree costs decisions and deliveries: the
 * engine and the real worker and webhook adapter on a memory store, N
 * incident creates decided then delivered to a loopback sink, with five
 * templated fields on the adapter, without a tree and with a 20-node tree
 * that every incident walks to its deepest matching node, in alternating
 * rounds. Both deliver exactly N deliveries to the one templated adapter;
 * the tree's other receiver takes nothing, so the difference is the
 * routing: the tree's walk per arrival, the route kept with the key and
 * written with the entry, and fan-out reading it. Then the same over HTTP:
 * `onceonly serve` on the memory store with that adapter, with and without
 * the tree, driven by wrk with the suite's mix. `npm run bench -- routes`.
 */
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { tempDir } from '../../test/helpers/tmp.js';
import { startListening, wrk } from '../http/wrk.js';
import type { ConfigInput } from '../../src/config/schema.js';
import { deliveryHarness } from '../../test/helpers/delivery.js';
import { int, table, targetAtMost, type Section } from '../report.js';

const N = Number(process.env.ROUTES_N ?? 5000);
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const MIX = fileURLToPath(new URL('../http/mix.lua', import.meta.url));
const HTTP_SECONDS = Number(process.env.HTTP_SECONDS ?? 8);
const HTTP_ROUNDS = 3;
const ROUNDS = 5;
const FIELDS = {
  queue: '{{ lookups.queues[labels.region] }}',
  ci: '{{ labels.element_id }}',
  urgency: '{% if severity == "CRITICAL" %}1{% else %}3{% endif %}',
  team: '{{ labels.team | upcase }}',
  short: '{{ summary | truncate: 80 }}',
};
const LOOKUPS = { queues: { eu: 'NOC EU', us: 'NOC US' } };

/**
 * 20 nodes: the root, eight team routes and a severity route (with
 * `continue`) the incidents pass by, then a regex route on the region that
 * takes them, whose nine fault-class children they also try.
 */
const TREE = {
  receiver: 'other',
  routes: [
    ...Array.from({ length: 8 }, (_, i) => ({ receiver: 'other', matchers: [`team="t${i}"`] })),
    { receiver: 'other', matchers: ['severity="INFO"'], continue: true },
    {
      receiver: 'hook',
      matchers: ['region=~"eu|us"'],
      routes: Array.from({ length: 9 }, (_, i) => ({ receiver: 'hook', matchers: [`fault_class="F${i}"`] })),
    },
  ],
};
const countNodes = (n: { routes?: unknown[] }): number => 1 + (n.routes ?? []).reduce<number>((a, c) => a + countNodes(c as { routes?: unknown[] }), 0);

interface Rates {
  decisions: number;
  deliveries: number;
}

async function rates(url: string, routed: boolean): Promise<Rates> {
  const config: ConfigInput = {
    lookups: LOOKUPS,
    adapters: [
      { name: 'hook', type: 'webhook', url, fields: FIELDS },
      ...(routed ? [{ name: 'other', type: 'webhook' as const, url: `${url}/other` }] : []),
    ],
    ...(routed ? { route: TREE } : {}),
  };
  const h = deliveryHarness(config);
  try {
    const t0 = performance.now();
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
    const decided = (performance.now() - t0) / 1000;
    const t1 = performance.now();
    const delivered = await h.drain();
    const s = (performance.now() - t1) / 1000;
    const wrong = h.settled.find((x) => x.outcome !== 'delivered' || x.adapter !== 'hook');
    if (wrong) throw new Error(`a delivery went wrong: ${JSON.stringify(wrong)}`);
    if (delivered !== N) throw new Error(`${delivered} deliveries for ${N} creates`);
    return { decisions: N / decided, deliveries: delivered / s };
  } finally {
    await h.close();
  }
}

/** POST /v1/incidents answers a second from `onceonly serve` (memory store) with this config's adapters and tree. */
async function httpRate(dir: string, url: string, routed: boolean, run: string): Promise<number> {
  const cfg = `${dir}/routes-${routed ? 'tree' : 'plain'}.yml`;
  const adapters = [`  - { name: hook, type: webhook, url: "${url}", fields: ${JSON.stringify(FIELDS)} }`, ...(routed ? [`  - { name: other, type: webhook, url: "${url}/other" }`] : [])];
  writeFileSync(cfg, `lookups: ${JSON.stringify(LOOKUPS)}\nadapters:\n${adapters.join('\n')}\n${routed ? `route: ${JSON.stringify(TREE)}\n` : ''}`);
  const srv = await startListening(process.execPath, ['dist/cli/main.js', 'serve', '--port', '0', '--store', 'memory:', '--config', cfg], {}, ROOT);
  try {
    const r = wrk(srv.url, MIX, HTTP_SECONDS, [run]);
    if (r.errors > 0) throw new Error(`${r.errors} errors over HTTP (${routed ? 'tree' : 'no tree'})`);
    return r.rps;
  } finally {
    await srv.stop();
  }
}

export async function routesSection(log: (s: string) => void): Promise<Section> {
  const sink = createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(200).end());
  });
  await new Promise<void>((r) => sink.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(sink.address() as AddressInfo).port}/in`;
  const plain: Rates[] = [];
  const routed: Rates[] = [];
  const httpPlain: number[] = [];
  const httpRouted: number[] = [];
  try {
    // A round of each first, not counted: the first decisions of a process run colder code.
    await rates(url, false);
    await rates(url, true);
    for (let r = 0; r < ROUNDS; r++) {
      plain.push(await rates(url, false));
      routed.push(await rates(url, true));
      log(
        `routes round ${r + 1}: ${int(plain.at(-1)!.decisions)} / ${int(routed.at(-1)!.decisions)} decisions/s, ${int(plain.at(-1)!.deliveries)} / ${int(routed.at(-1)!.deliveries)} deliveries/s (no tree / tree)`,
      );
    }
    const dir = tempDir('onceonly-bench-routes-');
    try {
      for (let r = 0; r < HTTP_ROUNDS; r++) {
        httpPlain.push(await httpRate(dir.path, url, false, `rp${r}`));
        httpRouted.push(await httpRate(dir.path, url, true, `rt${r}`));
        log(`routes over HTTP round ${r + 1}: ${int(httpPlain.at(-1)!)} / ${int(httpRouted.at(-1)!)} requests/s (no tree / tree)`);
      }
    } finally {
      dir.remove();
    }
  } finally {
    sink.close();
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const httpLoss = ((median(httpPlain) - median(httpRouted)) / median(httpPlain)) * 100;
  const m = (rs: Rates[], k: keyof Rates) => median(rs.map((r) => r[k]));
  const loss = (k: keyof Rates) => ((m(plain, k) - m(routed, k)) / m(plain, k)) * 100;
  const change = (k: keyof Rates) => `${loss(k) >= 0 ? '−' : '+'}${Math.abs(loss(k)).toFixed(1)}%`;
  return {
    title: 'A routing tree on the decision and delivery path',
    body: [
      `${int(N)} incident creates decided by the engine, then delivered by the real worker and webhook adapter (memory store, a loopback sink in the same process), the adapter with five templated fields; without a tree, and with a ${countNodes(TREE)}-node tree every create walks (nine routes passed by, a regex route that takes it, its nine children tried). Median of ${ROUNDS} alternating rounds after one of each not counted.`,
      table(
        ['', 'decisions/s', 'deliveries/s'],
        [
          ['no tree', int(m(plain, 'decisions')), int(m(plain, 'deliveries'))],
          [`${countNodes(TREE)}-node tree`, int(m(routed, 'decisions')), int(m(routed, 'deliveries'))],
          ['change', change('decisions'), change('deliveries')],
        ],
      ),
      `Over HTTP: \`onceonly serve\` on the memory store with the same adapter, and the tree or none, wrk \`-t1 -c64\` with the suite's incident mix for ${HTTP_SECONDS} s, ${HTTP_ROUNDS} alternating rounds: ${int(median(httpPlain))} requests/s without the tree, ${int(median(httpRouted))} with it (${httpLoss >= 0 ? '−' : '+'}${Math.abs(httpLoss).toFixed(1)}%; every round ${httpPlain.map((x, i) => `${int(x)} / ${int(httpRouted[i]!)}`).join(', ')}).`,
      `Every round (no tree / tree): decisions/s ${plain.map((x, i) => `${int(x.decisions)} / ${int(routed[i]!.decisions)}`).join(', ')}; deliveries/s ${plain.map((x, i) => `${int(x.deliveries)} / ${int(routed[i]!.deliveries)}`).join(', ')}.`,
    ],
    targets: [
      targetAtMost('requests/s over HTTP lost to a 20-node routing tree (median of rounds)', httpLoss, 10, '%'),
      targetAtMost(
        'in-process decision throughput lost to a 20-node routing tree (median of rounds)',
        loss('decisions'),
        10,
        '%',
        'the walk (a few µs) is measured against an in-process decision of about 11 µs; over HTTP a decision costs far more',
      ),
      targetAtMost('delivery throughput lost to a 20-node routing tree, five templated fields (median of rounds)', loss('deliveries'), 10, '%'),
    ],
  };
}
