/**
 * Section: scaling. Measures the capacity model's inputs (what a decision
 * costs the store server and the replica), validates the model on 1, 2 and
 * 3 Redis masters, shows how the shard tags spread over larger clusters, and
 * projects the replicas and masters for 10k, 100k and 1M decisions/s.
 * `npm run bench -- scaling` prints it and writes it into docs/scaling.md.
 */
import os from 'node:os';
import { scripts } from '../../src/store/redis/scripts.js';
import { shardsPerMaster } from '../../test/helpers/slots.js';
import { startRedisCluster } from '../../test/helpers/redis.js';
import { decideBenchmarkArgs } from '../backends/redis.js';
import { clusterCeiling, postgresFunctionCosts, postgresPartitioned, redisScriptCosts, servedCost, type ServedCost } from '../scaling/measure.js';
import { int, table, type Section } from '../report.js';

/** Run everything at half its measured capacity: a replica or master can fail, and bursts come. */
export const HEADROOM = 0.5;
const RATES = [10_000, 100_000, 1_000_000];
const SHARD_CHOICES = [64, 256, 1024, 4096];
const MASTER_COUNTS = [3, 16, 64, 256];
/** An idle delivery worker looks for work every 200 ms (delivery idleMs): the polling the model counts per replica. */
const PASSES_PER_SECOND = 5;
/** Postgres primaries as large as the model sizes them. */
const PG_PRIMARY_CORES = 32;

const N = Number(process.env.SCALING_N ?? 20_000);
const SECONDS = Number(process.env.HTTP_SECONDS ?? 10);

/** The busiest master's share of the load over the mean share, and the masters holding no shard. */
export function balance(shards: number, masters: number) {
  const per = shardsPerMaster(shards, masters);
  const mean = shards / masters;
  return { worst: per.reduce((a, b) => Math.max(a, b), 0) / mean, empty: per.filter((p) => p === 0).length };
}

const fmt = (v: number, digits = 1) => (Number.isFinite(v) ? v.toFixed(digits) : 'n/a');

export async function scalingSection(log: (s: string) => void): Promise<Section> {
  log('scaling: Redis cost per operation');
  const { costs, idlePass } = await redisScriptCosts(N, log);
  log('scaling: Postgres cost per function');
  const functions = await postgresFunctionCosts(Math.round(N / 4));
  log('scaling: Postgres, plain and hash-partitioned incidents (pgbench)');
  const partitioned = await postgresPartitioned(16);
  const served: ServedCost[] = [];
  for (const store of ['sqlite', 'redis', 'postgres'] as const) served.push(await servedCost(store, SECONDS, log));

  // Validation: the same script on 1, 2 and 3 masters.
  const validation: Array<{ masters: number; rate: number; usPerCall: number; coresUsed: number }> = [];
  for (const masters of [1, 2, 3]) {
    const cluster = await startRedisCluster(masters);
    try {
      log(`scaling: redis-benchmark on every master of ${masters}`);
      validation.push({ masters, ...(await clusterCeiling(cluster.nodes, 400_000, scripts.decideIncident, decideBenchmarkArgs)) });
    } finally {
      await cluster.stop();
    }
  }

  const redisServed = served.find((s) => s.store === 'redis')!;
  const pgServed = served.find((s) => s.store === 'postgres')!;
  const sqliteServed = served.find((s) => s.store === 'sqlite')!;
  // Capacities at 100% of one core, then the headroom rule.
  const perReplica = 1e6 / redisServed.replicaUs;
  const perMaster = 1e6 / redisServed.storeUs;
  const perPgCore = 1e6 / pgServed.storeUs;
  // An idle pass's Redis cost grows with the shard count: a line through the measured points.
  const [lo, hi] = [idlePass[0]!, idlePass.at(-1)!];
  const perShardUs = (hi.us - lo.us) / (hi.shards - lo.shards);
  const passUs = (shards: number) => lo.us + perShardUs * (shards - lo.shards);
  const projection = RATES.map((rate) => {
    const replicas = Math.ceil(rate / (perReplica * HEADROOM));
    // Masters carry the decisions and every replica's polling, and the busiest one fills first. For each
    // shard count, the masters that carry that load (settled with the balance it gives); the count needing
    // the fewest masters wins: more shards balance better, and every one of them is polled.
    const mastersFor = (shards: number) => {
      const load = (rate * redisServed.storeUs + replicas * PASSES_PER_SECOND * passUs(shards)) / 1e6;
      let m = Math.ceil(load / HEADROOM);
      for (let round = 0; round < 50; round++) {
        // More masters than shards: some would hold nothing, and adding masters no longer helps.
        if (m > shards) return Number.POSITIVE_INFINITY;
        const next = Math.ceil((load * balance(shards, m).worst) / HEADROOM);
        if (next === m) break;
        m = next;
      }
      return m;
    };
    const shards = SHARD_CHOICES.reduce((best, s) => (mastersFor(s) < mastersFor(best) ? s : best));
    const masters = mastersFor(shards);
    const pollingShare = (replicas * PASSES_PER_SECOND * passUs(shards)) / (rate * redisServed.storeUs + replicas * PASSES_PER_SECOND * passUs(shards));
    const pgCores = Math.ceil(rate / (perPgCore * HEADROOM));
    const pgReplicas = Math.ceil(rate / ((1e6 / pgServed.replicaUs) * HEADROOM));
    return [
      int(rate),
      int(replicas),
      int(masters),
      `${shards} (busiest master ${fmt(balance(shards, masters).worst, 2)}× the mean)`,
      `${Math.round(pollingShare * 100)}%`,
      int(pgReplicas),
      `${int(pgCores)} (${int(Math.ceil(pgCores / PG_PRIMARY_CORES))} × ${PG_PRIMARY_CORES}-core)`,
    ];
  });

  const one = validation[0]!;
  return {
    title: 'Scaling: the capacity model',
    body: [
      `Measured on ${os.cpus().length} × ${os.cpus()[0]?.model.trim()}. Every figure is CPU time the process spent, not wall time.`,
      '**Redis, each operation alone** (its own redis-server, 64 in flight as a replica sends them; Redis time from `INFO commandstats`):',
      table(
        ['operation', 'Redis µs per operation', 'script calls per operation'],
        costs.map((c) => [c.what, fmt(c.usPerOp), fmt(c.callsPerOp, 2)]),
      ),
      `An idle delivery worker's pass (fan-out and lease over every shard, nothing due), Redis µs per pass: ${idlePass.map((p) => `${p.shards} shards ${fmt(p.us, 0)}`).join(', ')}. A replica makes up to 5 idle passes a second.`,
      '**Postgres, each server-side function** (`pg_stat_user_functions`, own time per call, the decisions and windows of the mix):',
      table(
        ['function', 'calls', 'µs per call'],
        functions.map((f) => [f.fn, int(f.calls), fmt(f.usPerCall)]),
      ),
      `**Postgres, partitioned or not**: pgbench (16 clients, 10 s, no Node) calling the decision function over 100,000 keys on the incidents table as migrated, ${int(partitioned.plain)} decisions/s, and hash-partitioned into 16 by (tenant, key), ${int(partitioned.partitioned)} decisions/s (${fmt(partitioned.partitioned / partitioned.plain, 2)}×; the better of two runs each, interleaved).`,
      `**The whole mix through \`onceonly serve\`** (wrk, 64 connections, ${SECONDS} s, the suite's incident mix, every CREATE and UPDATE delivered to a webhook; CPU counted until the last delivery landed):`,
      table(
        ['store', 'decisions/s', 'deliveries', 'replica CPU µs per decision', 'store server CPU µs per decision'],
        served.map((s) => [s.store, int(s.rps), int(s.deliveries), fmt(s.replicaUs, 0), s.store === 'sqlite' ? 'in the replica' : fmt(s.storeUs, 0)]),
      ),
      `**The model** (headroom: run at ${HEADROOM * 100}% of measured capacity). A replica is one Node.js event loop, about one core: ${int(perReplica)} decisions/s at 100% on Redis, ${int(1e6 / sqliteServed.replicaUs)} on SQLite (the only store that cannot go past one machine). A Redis master is one thread: ${int(perMaster)} decisions/s of the mix at 100%, delivery included. Postgres: ${int(perPgCore)} decisions/s per core of the server. Replicas = rate ÷ (replica capacity × ${HEADROOM}). Masters = (rate × Redis µs per decision + replicas × ${PASSES_PER_SECOND} passes/s × µs per idle pass) × the busiest master's share over the mean ÷ (1,000,000 × ${HEADROOM}): every replica's delivery worker visits every shard about ${PASSES_PER_SECOND} times a second, ${fmt(perShardUs, 1)} µs of Redis per shard per pass, and the busiest master is the one that fills up. The shard count is the one of ${SHARD_CHOICES.join(', ')} that needs the fewest masters: more shards balance the masters better, and every replica polls every one of them. Postgres: one primary's cores are the ceiling (past them, tenants are split over databases).`,
      table(
        [
          'decisions/s',
          'replicas (Redis)',
          'Redis masters',
          'redis.shards',
          'of the masters’ CPU: workers polling',
          'replicas (Postgres)',
          'Postgres cores (primaries)',
        ],
        projection,
      ),
      `**Validation on this machine**: redis-benchmark running the decision script on every master of a cluster of 1, 2 and 3 masters at once (one redis-benchmark per master, pipelined, 50 connections, 400,000 calls each, keys in a shard tag the master owns: what \`--cluster\` does, which refuses fewer than 3 masters). The model says throughput = CPU given to Redis ÷ cost per call; this machine has ${os.cpus().length} cores for the masters and redis-benchmark together, so the masters cannot get a core each past ${os.cpus().length - 1}.`,
      table(
        ['masters', 'decisions/s', 'vs 1 master', 'Redis µs per call', 'cores the masters used', 'model: cores used ÷ µs per call', 'measured ÷ model'],
        validation.map((v) => {
          const model = (v.coresUsed * 1e6) / v.usPerCall;
          return [v.masters, int(v.rate), `${fmt(v.rate / one.rate, 2)}×`, fmt(v.usPerCall, 1), fmt(v.coresUsed, 2), int(model), `${fmt(v.rate / model, 2)}×`];
        }),
      ),
      '**Balance of the shard tags over masters** (Redis CRC16 slot of each `{oo:S}`, slots split evenly as `redis-cli --cluster create` does; keys spread evenly over shards): the busiest master’s load over the mean, and masters with no shard.',
      table(
        ['shards', ...MASTER_COUNTS.map((m) => `${m} masters`)],
        SHARD_CHOICES.map((s) => [
          s,
          ...MASTER_COUNTS.map((m) => {
            const b = balance(s, m);
            return `${fmt(b.worst, 2)}×${b.empty ? `, ${b.empty} empty` : ''}`;
          }),
        ]),
      ),
    ],
    targets: [],
  };
}
