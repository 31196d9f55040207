// needs: redis
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { incidentKey } from '../../src/core/identity.js';
import { startServicenowFake } from '../fakes/servicenow-fake.js';
import { servicenowCorrelation } from '../helpers/identities.js';
import { startRedis } from '../helpers/redis.js';
import { tempDir } from '../helpers/tmp.js';
import { drive, settledTickets, shuffle, startReplicas, toServicenow, type IngestShot } from './harness.js';
import { checkHistory, describe as describeViolation, History } from './history.js';
import { testSeed } from '../helpers/seed.js';

const KEYS = Number(process.env.CHAOS_KEYS ?? 10_000);
const COPIES = 5;
const CLIENTS = 32;
const SEED = testSeed('chaos/replica-kills', 'CHAOS_SEED');

// two replicas on one Redis deliver to a ServiceNow
// stand-in while each is SIGKILLed three times mid-run (the first after 20%
// of the work) and restarted. Every answered request must be in the store,
// the ITSM must hold exactly one ticket per key, and the recorded history of
// decisions must be legal key by key.
test(`replica kills: ${KEYS} keys × ${COPIES} copies from ${CLIENTS} clients, each of 2 replicas SIGKILLed 3 times (seed ${SEED})`, async () => {
  const redis = await startRedis();
  const snow = await startServicenowFake();
  const dir = tempDir();
  const replicas = await startReplicas(2, redis.url, dir.path, toServicenow(snow.url));
  const history = new History();
  const started = Date.now();
  try {
    // One key in ten changes severity in its last copy; the shuffle spreads copies (and races) over the run.
    const shots: IngestShot[] = shuffle(
      Array.from({ length: KEYS * COPIES }, (_, n) => {
        const k = n % KEYS;
        const severity = n >= KEYS * (COPIES - 1) && k % 10 === 0 ? 'CRITICAL' : 'MAJOR';
        const body = { element_id: `olt-${k}`, fault_class: 'LOS', root_cause_id: 'fiber-cut-9', severity };
        return { key: incidentKey(body), fp: `${severity}|0`, path: '/v1/incidents', body };
      }),
      SEED,
    );
    // Kills at 20/45/70% for replica 0 and 30/55/80% for replica 1, one at a time.
    const plan = [
      [0.2, 0],
      [0.3, 1],
      [0.45, 0],
      [0.55, 1],
      [0.7, 0],
      [0.8, 1],
    ] as const;
    let kills = Promise.resolve();
    let planned = 0;
    const crashed: string[] = [];
    const { answered, retried } = await drive(shots, CLIENTS, replicas, history, (done) => {
      while (planned < plan.length && done >= plan[planned]![0] * shots.length) {
        const [at, i] = plan[planned++]!;
        kills = kills.then(async () => {
          await replicas.crash(i);
          crashed.push(`replica ${i} at ${Math.round(at * 100)}%`);
        });
      }
    });
    await kills;
    assert.equal(crashed.length, 6, `every planned kill happened: ${crashed.join(', ')}`);
    assert.equal(answered, shots.length);

    // Deliveries finish on the restarted replicas (a dead worker's lease runs out after 3 s).
    const { duplicates, merged } = await settledTickets(replicas, snow.records, KEYS);
    const perCorrelation = new Map<string, number>();
    for (const r of snow.records.values()) perCorrelation.set(r.correlation_id!, (perCorrelation.get(r.correlation_id!) ?? 0) + 1);
    const violations = checkHistory(history.ops);
    const indeterminate = history.ops.filter(History.indeterminate).length;
    const creates = history.ops.filter((o) => o.decision === 'CREATE').length;
    console.log(
      `replica kills (seed ${SEED}): ${history.ops.length} attempts, ${answered} answered, ${indeterminate} indeterminate (${retried} further attempts, counting waits for a restarting replica), ` +
        `kills: ${crashed.join(', ')}; CREATE answers ${creates}, tickets ${snow.records.size}, duplicate tickets ${duplicates} (merged ${merged}), ` +
        `ITSM calls ${snow.requests.length}, history violations ${violations.length}, ${((Date.now() - started) / 1000).toFixed(1)} s`,
    );
    assert.deepEqual(
      violations.slice(0, 5).map((v) => describeViolation(v)),
      [],
      `illegal history (seed ${SEED})`,
    );
    const dup = [...perCorrelation].find(([, n]) => n > 1)?.[0];
    if (dup) {
      // The ITSM's side of the first duplicated key, for the report.
      const calls = snow.requests.filter((r) => r.raw.includes(dup) || r.query.get('sysparm_query')?.includes(dup));
      console.log(
        `ITSM calls for ${dup}:\n${calls.map((r) => `  ${r.at - started} ms ${r.method} ${r.path} ${r.headers['user-agent'] ?? ''} ${r.raw.slice(0, 160)}`).join('\n')}`,
      );
    }
    assert.equal(snow.records.size, KEYS, 'exactly one ticket per key');
    assert.equal(duplicates, 0);
    assert.equal(merged, 0, 'with the store up, no create ever raced another: nothing to merge');
    assert.ok(indeterminate > 0, 'the kills really cut requests off mid-flight');

    // Every answered request is reflected: each key is live, its arrivals counted.
    const answers = new Map<string, number>();
    for (const o of history.ops) if (History.ok(o)) answers.set(o.key, (answers.get(o.key) ?? 0) + 1);
    const keys = [...answers.keys()];
    let next = 0;
    const missing: string[] = [];
    // Each ticket ends at the key's last decided severity (impact 1 for CRITICAL, 2 for MAJOR, as docs/adapters.md maps them).
    const tickets = new Map([...snow.records.values()].map((r) => [r.correlation_id!, r]));
    const stale: string[] = [];
    await Promise.all(
      Array.from({ length: 16 }, async () => {
        while (next < keys.length) {
          const key = keys[next++]!;
          const r = await fetch(`${replicas.urls[next % 2]}/v1/incidents/${key}`);
          const body = (await r.json()) as { refires: number; severity: string };
          if (r.status !== 200 || body.refires + 1 < answers.get(key)!)
            missing.push(`${key}: ${r.status} ${JSON.stringify(body)} for ${answers.get(key)} answers`);
          const ticket = tickets.get(servicenowCorrelation({ tenant: 'default', kind: 'incident', key }));
          const impact = { CRITICAL: '1', MAJOR: '2' }[body.severity];
          if (ticket?.impact !== impact) stale.push(`${key}: decided ${body.severity}, ticket impact ${ticket?.impact ?? 'none'}`);
        }
      }),
    );
    assert.deepEqual(missing.slice(0, 5), [], 'every answered request is in the store');
    assert.deepEqual(stale.slice(0, 5), [], 'every ticket ends at its key’s last decided severity');
    assert.ok(
      [...tickets.values()].some((t) => t.impact === '1'),
      'some keys ended CRITICAL, so the check compared more than one value',
    );
    assert.equal(keys.length, KEYS);
  } finally {
    await replicas.stop();
    await snow.close();
    await redis.stop();
    dir.remove();
  }
});
