import { test } from 'node:test';
import assert from 'node:assert/strict';
import { incidentKey } from '../../src/core/identity.js';
import { startSink } from '../fakes/http-fake.js';
import { metric } from '../helpers/load.js';
import { tempDir } from '../helpers/tmp.js';
import { delivered, drive, repeatsAgainstKills, startReplicas, type IngestShot } from './harness.js';
import { checkHistory, describe as describeViolation, History } from './history.js';

const KEYS = 2000;
/** How long a settle may take to commit after the receiver answered, on a loaded machine. */
const SETTLE_SLACK_MS = 2000;

// one replica on SQLite is SIGKILLed three times while it
// decides and delivers. The receiver takes 150 ms a call, so at every kill
// decisions are committed and not yet delivered (counted just before it),
// and calls are in flight. After the restarts every decision is delivered,
// once in effect: a call the receiver applied before the kill is repeated
// only with the same Idempotency-Key, which a receiver drops.
test(`crash between decision and delivery: ${KEYS} incidents, the replica SIGKILLed 3 times, every decision delivered once`, async () => {
  const sink = await startSink(200, {});
  sink.faults = () => ({ delayMs: 150 });
  const dir = tempDir();
  const replicas = await startReplicas(
    1,
    `sqlite:${dir.path}/onceonly.db`,
    dir.path,
    `delivery: { lease_ms: 2000 }\nadapters: [ { name: hook, type: webhook, url: "${sink.url}/in", timeout_ms: 1000 } ]\n`,
  );
  const history = new History();
  try {
    const shots: IngestShot[] = Array.from({ length: KEYS }, (_, k) => {
      const body = { element_id: `bng-${k}`, fault_class: 'PPPOE_FLAP', root_cause_id: 'agg-3', severity: 'MINOR' };
      return { key: incidentKey(body), fp: 'MINOR|0', path: '/v1/incidents', body };
    });
    const undelivered: number[] = [];
    let kills = Promise.resolve();
    let planned = 0;
    const plan = [0.25, 0.5, 0.75];
    await drive(shots, 16, replicas, history, (done) => {
      if (planned < plan.length && done >= plan[planned]! * shots.length) {
        planned++;
        kills = kills.then(async () => {
          // Committed and not yet delivered: what the kill must not lose.
          undelivered.push(await metric(replicas.urls[0]!, /^onceonly_deliveries_pending (\d+)/m).catch(() => NaN));
          await replicas.crash(0);
        });
      }
    });
    await kills;
    assert.equal(undelivered.length, 3);

    await delivered(replicas, () => `${sink.requests.length} delivered`); // a lease left by the last kill (2 s) runs out in the quiet time
    const creates = sink.requests.filter((r) => r.body?.action === 'create');
    const perIdem = new Map<string, number>();
    for (const r of creates) perIdem.set(String(r.headers['idempotency-key']), (perIdem.get(String(r.headers['idempotency-key'])) ?? 0) + 1);
    const keys = new Set(creates.map((r) => r.body.key as string));
    const repeats = creates.length - perIdem.size;
    // Each repeat is of a call the receiver took in the 150 ms (its delay) plus
    // settle time before a kill: none without a kill, none long before one.
    const against = repeatsAgainstKills(creates, replicas.kills, 150 + SETTLE_SLACK_MS);
    const violations = checkHistory(history.ops);
    console.log(
      `crash between decision and delivery: ${KEYS} incidents, ${history.ops.filter(History.indeterminate).length} requests cut off, ` +
        `committed-undelivered at the kills ${undelivered.join(' / ')}; delivered ${keys.size} keys in ${creates.length} calls ` +
        `(${repeats} repeats of a call applied before a kill, each with its Idempotency-Key; at most ${against.most} arrivals of one call), history violations ${violations.length}`,
    );
    assert.ok(
      undelivered.some((n) => n > 0),
      'the kills caught decisions not yet delivered',
    );
    assert.equal(keys.size, KEYS, 'every decision delivered');
    assert.equal(perIdem.size, KEYS, 'once each in effect: one Idempotency-Key per decision');
    assert.ok([...perIdem.keys()].every((k) => k.endsWith(':create:1')));
    assert.deepEqual(against.unexplained.slice(0, 5), [], 'every repeat is of a call applied just before a kill');
    assert.ok(against.most <= replicas.kills.length + 1, `no call arrived more than once per kill (${against.most})`);
    assert.deepEqual(
      violations.slice(0, 5).map((v) => describeViolation(v)),
      [],
    );
  } finally {
    await replicas.stop();
    await sink.close();
    dir.remove();
  }
});
