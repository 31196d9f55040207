/**
 * The request path without the network: what one POST /v1/incidents costs in
 * our own code, in-process, wired as the server wires it (the memory store
 * behind the timing wrapper, the decision metrics and the dashboard tally),
 * and its parts one by one. HTTP figures move with the kernel and the load
 * generator; these move only with our code, so they are the ones a change to
 * the path is judged by.
 */
import fastJsonStringify from 'fast-json-stringify';
import { incidentFingerprint } from '../../src/core/fingerprint.js';
import { incidentKey } from '../../src/core/identity.js';
import { systemClock } from '../../src/core/clock.js';
import { Deduplicator } from '../../src/engine/deduplicator.js';
import { parseIncident } from '../../src/inputs/incident/parse.js';
import { incidentSchema } from '../../src/inputs/incident/schema.js';
import { DecisionTally, observers } from '../../src/observe/decision-tally.js';
import { instrumentStore } from '../../src/observe/instrumented-store.js';
import { Metrics } from '../../src/observe/metrics.js';
import { MemoryStore } from '../../src/store/memory/memory-store.js';
import { GRACE_MS } from '../backends/backend.js';
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { tempDir } from '../../test/helpers/tmp.js';
import { instructionsPerAnswer, type Instructions } from '../http/instructions.js';
import { int, ratio, table, targetAtMost, x, type Section } from '../report.js';
import { incidentMix } from '../workload.js';
import { BARE_FASTIFY } from './http.js';

const N = Number(process.env.PATH_OPS ?? 50_000);

/** The suite's incident mix (bench/workload.ts) as the bodies fastify hands the route, parsed. */
const bodies = (n: number, prefix: string): unknown[] =>
  incidentMix(n, prefix).map((op) => ({
    element_id: op.key,
    fault_class: 'LINK_DOWN',
    root_cause_id: 'rc-4411',
    severity: op.fp.split('|')[0],
    summary: 'link down',
  }));

/**
 * µs per call: the median of 7 passes over `items` (after a warm-up pass),
 * so a garbage collection or a neighbour's burst in one pass does not move it.
 */
async function perCall<T>(items: T[], run: (x: T) => unknown): Promise<number> {
  const passes: number[] = [];
  for (let pass = 0; pass < 8; pass++) {
    const t = performance.now();
    for (const x of items) await run(x);
    if (pass > 0) passes.push(((performance.now() - t) * 1000) / items.length);
  }
  return passes.sort((a, b) => a - b)[3]!;
}

/** The answer POST /v1/incidents gives, as a JSON Schema: what a fastify response schema would compile a serializer from. */
const ANSWER_SCHEMA = {
  type: 'object',
  properties: {
    decision: { type: 'string' },
    dedup_key: { type: 'string' },
    provisional: { type: 'boolean' },
    muted: { anyOf: [{ type: 'null' }, { type: 'object', properties: { by: { type: 'string' }, id: { type: 'string' } } }] },
  },
} as const;

/** Answers as the route gives them: the three decisions, one in ten muted. */
const answers = (n: number) =>
  Array.from({ length: n }, (_, i) => ({
    decision: ['SUPPRESS', 'CREATE', 'UPDATE'][i % 3],
    dedup_key: `dedup:${i.toString(16).padStart(32, '0')}`,
    provisional: false,
    muted: i % 10 ? null : { by: 'silence', id: `s-${i}` },
  }));

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const json = (n: number, prefix: string) => bodies(n, prefix).map((b) => JSON.stringify(b));

/** Rounds of the instruction count, bare fastify and onceonly taken in turn: a neighbour's burst can move one count by 10–20%, so the median is reported. */
const ROUNDS = Number(process.env.PATH_ROUNDS ?? 3);

const median = (xs: Instructions[]): Instructions & { range: [number, number] } => {
  const main = xs.map((i) => i.main).sort((a, b) => a - b);
  const all = xs.map((i) => i.all).sort((a, b) => a - b);
  const mid = Math.floor(xs.length / 2);
  return { main: main[mid]!, all: all[mid]!, range: [main[0]!, main.at(-1)!] };
};

/** The config files the servers read: the default one, and one that keeps no history. */
interface Configs {
  config: string;
  noHistory: string;
}

/** The servers the instruction count compares, each as its arguments to node given the config files. */
const SERVERS = {
  /** the bare fastify route: the framework's floor */
  bare: () => BARE_FASTIFY,
  /** `onceonly serve` with a fixed answer (bench/http/app-floor.ts): its HTTP layer without the decision */
  layer: ({ config }: Configs) => ['--import', 'tsx', 'bench/http/app-floor.ts', '--port', '0', '--store', 'memory:', '--config', config],
  /** `onceonly serve` deciding, with no history kept (`history: { max_events: 0 }`) */
  decision: ({ noHistory }: Configs) => ['dist/cli/main.js', 'serve', '--port', '0', '--store', 'memory:', '--config', noHistory],
  /** `onceonly serve` as it ships: the decision and each key's history */
  onceonly: ({ config }: Configs) => ['dist/cli/main.js', 'serve', '--port', '0', '--store', 'memory:', '--config', config],
} as const;
type Server = keyof typeof SERVERS;

/**
 * Instructions per answer of bare fastify and of `onceonly serve` on the memory store, as served (hooks, request id,
 * mutes, history), and of the two steps between (the HTTP layer alone, the decision without history): the median of
 * ROUNDS rounds each, the four taken in turn within a round.
 */
async function instructions(log: (s: string) => void) {
  const dir = tempDir('onceonly-bench-path-');
  const counts: Record<Server, Instructions[]> = { bare: [], layer: [], decision: [], onceonly: [] };
  try {
    const configs: Configs = { config: `${dir.path}/onceonly.yml`, noHistory: `${dir.path}/no-history.yml` };
    writeFileSync(configs.config, `failopen:\n  journal_path: ${dir.path}/journal.db\n`);
    writeFileSync(configs.noHistory, `failopen:\n  journal_path: ${dir.path}/journal-2.db\nhistory: { max_events: 0 }\n`);
    for (let round = 1; round <= ROUNDS; round++) {
      for (const server of Object.keys(SERVERS) as Server[]) {
        log(`path: callgrind, ${server} (round ${round} of ${ROUNDS})`);
        counts[server].push(await instructionsPerAnswer(process.execPath, [...SERVERS[server](configs)], ROOT, json));
      }
    }
    return { bare: median(counts.bare), layer: median(counts.layer), decision: median(counts.decision), onceonly: median(counts.onceonly) };
  } finally {
    dir.remove();
  }
}

export async function pathSection(log: (s: string) => void): Promise<Section> {
  log('path: the engine in-process');
  const metrics = new Metrics(systemClock);
  const raw = new MemoryStore(systemClock, GRACE_MS);
  const store = instrumentStore(raw, metrics.storeLatency);
  const dedup = new Deduplicator({ store, observer: observers(metrics, new DecisionTally()) });
  const bare = new Deduplicator({ store: new MemoryStore(systemClock, GRACE_MS) });
  const parsed = bodies(N, 'p').map((b) => parseIncident(b));
  const compiled = fastJsonStringify(ANSWER_SCHEMA);
  const sample = answers(10);
  if (sample.some((a) => compiled(a) !== JSON.stringify(a))) throw new Error('the compiled serializer does not give the same answer');
  const rows: Array<[string, number]> = [
    ['decideIncident as the server wires it (validation, identity, store, metrics, tally)', await perCall(bodies(N, 'w'), (b) => dedup.decideIncident(b))],
    ['the same with no metrics, tally or timing wrapper', await perCall(bodies(N, 'b'), (b) => bare.decideIncident(b))],
    ['validation alone, as served (the common shape checked by hand, the rest by zod)', await perCall(bodies(N, 'v'), (b) => parseIncident(b))],
    ['the same by zod alone (the incident schema, as before the hand check)', await perCall(bodies(N, 'z'), (b) => incidentSchema.parse(b))],
    ['identity alone (SHA-256 key and fingerprint)', await perCall(parsed, (i) => [incidentKey(i), incidentFingerprint(i)])],
    ['the answer serialized by JSON.stringify (what fastify does with no response schema, as now)', await perCall(answers(N), (a) => JSON.stringify(a))],
    ['the same serialized by fast-json-stringify compiled from its schema (what a response schema would do)', await perCall(answers(N), compiled)],
  ];
  const ins = await instructions(log);
  const insRatio = ratio(ins.onceonly.main, ins.bare.main);
  return {
    title: 'The request path, in-process',
    body: [
      `What one incident costs in onceonly's own code with no HTTP around it: the suite's incident mix as JSON bodies, ${N.toLocaleString('en-US')} calls one at a time, the median of 7 passes (re-fires after the first pass), on the memory store (so the store is a Map): µs per call. The HTTP section's figures include the kernel and the load generator; these do not, so a change to the request path is judged by them.`,
      table(
        ['path', 'µs per call'],
        rows.map(([what, us]) => [what, us.toFixed(2)]),
      ),
      `Instructions per answer as served, counted by callgrind (valgrind) over 3,000 requests of the same mix after 3,000 to warm up, 8 in flight over keep-alive: \`POST /v1/incidents\` on \`onceonly serve\` (memory store, default config: the hooks, the request id, the mute and hold checks, the history) against the bare fastify route, the median of ${ROUNDS} rounds taken in turn (the main thread's lowest and highest beside it). Instruction counts move far less than times with the machine's load, so this ratio is the regression guard of the HTTP path; a busy neighbour still moves one count by up to a fifth, hence the rounds.`,
      table(
        ['server', 'main thread, instructions per answer', 'lowest – highest', 'every thread', 'main thread vs bare fastify'],
        (
          [
            ['bare fastify', ins.bare],
            ["onceonly's HTTP layer with a fixed answer (no validation, decision or history)", ins.layer],
            ['onceonly deciding, history off', ins.decision],
            ['onceonly as it ships, memory store', ins.onceonly],
          ] as const
        ).map(([what, c]) => [what, int(c.main), `${int(c.range[0])} – ${int(c.range[1])}`, int(c.all), x(ratio(c.main, ins.bare.main))]),
      ),
      `Where the main thread's extra instructions go, from the medians above (each step's count less the one before it): the HTTP layer (the access rule, the body limit and UTF-8 check, the request id, the Idempotency-Key and error hooks, and whatever these change in Node's own work) ${int(ins.layer.main - ins.bare.main)}; the decision (validation, identity, the store, metrics, mutes and holds) ${int(ins.decision.main - ins.layer.main)}; each key's history ${int(ins.onceonly.main - ins.decision.main)}. Against bare fastify's ${int(ins.bare.main)}, the 1.5× target leaves ${int(ins.bare.main / 2)} for all three.`,
    ],
    targets: [
      targetAtMost(
        'main-thread instructions per answer, onceonly on memory vs bare fastify',
        insRatio,
        1.5,
        '×',
        'what remains is named in "Where the HTTP time goes" (docs/benchmarks.md)',
      ),
    ],
  };
}
