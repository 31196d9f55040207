// needs: redis
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startSink } from '../fakes/http-fake.js';
import { startRedis } from '../helpers/redis.js';
import { tempDir } from '../helpers/tmp.js';
import { type IngestShot, delivered, driveLanes, repeatsAgainstKills, startReplicas } from './harness.js';
import { History } from './history.js';

const DEVICES = 60;
const EVENTS = 50;
const LANES = 16;

/**
 * A recorded device stream (the device-event drill): each device reports EVENTS events in
 * order; every fourth reboots at its 30th (a new boot, sequence from 1 again);
 * every 10th event is re-sent at once and every 20th again five events later
 * (a reconnecting producer). Each device is one producer, so its events leave
 * in order; devices interleave. The model is what should come out of it.
 */
function recordedStream() {
  const lanes: IngestShot[][] = Array.from({ length: LANES }, () => []);
  const finals = new Map<string, { boot_id: string; sequence: number; state: string }>();
  let transitions = 0;
  const perDevice: IngestShot[][] = [];
  for (let d = 0; d < DEVICES; d++) {
    const device = `ont-${d}`;
    const shots: IngestShot[] = [];
    let last: string | null = null;
    for (let i = 0; i < EVENTS; i++) {
      const rebooted = d % 4 === 0 && i >= 30;
      const boot_id = rebooted ? 'b2' : 'b1';
      const sequence = rebooted ? i - 29 : 1000 + i;
      const state = ['UP', 'UP', 'DEGRADED', 'UP', 'DOWN', 'DOWN', 'UP'][(i * 3 + d) % 7]!;
      const body = {
        tenant_id: 'acme',
        device_id: device,
        boot_id,
        sequence,
        state,
        observed_at: new Date(Date.UTC(2026, 10, 30, 12) + i * 1000).toISOString(),
      };
      const shot = { key: `${device}|${boot_id}|${sequence}`, fp: state, path: '/v1/events', body };
      shots.push(shot);
      if (i % 10 === 9) shots.push(shot);
      if (last !== null && last !== state) transitions++;
      last = state;
      finals.set(device, { boot_id, sequence, state });
    }
    // The late repeats: every 20th event once more, five events on.
    const withLate = [...shots];
    for (let i = 5; i < EVENTS; i += 20) {
      const original = shots.findIndex((s) => (s.body as { sequence: number }).sequence === (d % 4 === 0 && i >= 30 ? i - 29 : 1000 + i));
      withLate.splice(Math.min(withLate.length, original + 6), 0, shots[original]!);
    }
    perDevice.push(withLate);
  }
  // Each lane is a producer for a few devices, sending their events interleaved.
  for (let d = 0; d < DEVICES; d++) {
    const lane = lanes[d % LANES]!;
    const mine = perDevice[d]!;
    if (lane.length === 0) lane.push(...mine);
    else {
      const merged: IngestShot[] = [];
      for (let i = 0; i < Math.max(lane.length, mine.length); i++) {
        if (i < lane.length) merged.push(lane[i]!);
        if (i < mine.length) merged.push(mine[i]!);
      }
      lanes[d % LANES] = merged;
    }
  }
  return { lanes, finals, transitions, identities: DEVICES * EVENTS, sent: perDevice.reduce((s, x) => s + x.length, 0) };
}

// the stream replayed through two replicas on one Redis
// while one replica is SIGKILLed twice and restarted. Every identity is
// applied once, the final state of every device is the model's, every
// transition makes exactly one notification, and the accounting adds up.
test(`device events under chaos: ${DEVICES} devices × ${EVENTS} events with repeats and reboots, a replica killed twice`, async () => {
  const redis = await startRedis();
  const sink = await startSink(200, {});
  const dir = tempDir();
  const replicas = await startReplicas(
    2,
    redis.url,
    dir.path,
    `delivery: { lease_ms: 3000, base_delay_ms: 50, max_delay_ms: 500 }\nadapters: [ { name: hook, type: webhook, url: "${sink.url}/in", kinds: [event], timeout_ms: 2000 } ]\n`,
  );
  const history = new History();
  try {
    const s = recordedStream();
    let kills = Promise.resolve();
    let planned = 0;
    const plan = [0.3, 0.65];
    const answered = await driveLanes(s.lanes, replicas, history, (done) => {
      if (planned < plan.length && done >= plan[planned]! * s.sent) {
        planned++;
        kills = kills.then(() => replicas.crash(0));
      }
    });
    await kills;
    assert.equal(planned, 2);
    assert.equal(answered, s.sent);

    // Each identity applied exactly once: one `applied` answer, or none when an attempt lost its answer.
    const byIdentity = new Map<string, { applied: number; lost: number; other: string[] }>();
    for (const o of history.ops) {
      const x = byIdentity.get(o.key) ?? { applied: 0, lost: 0, other: [] };
      if (History.indeterminate(o)) x.lost++;
      else if (o.outcome === 'applied') x.applied++;
      else x.other.push(o.outcome ?? String(o.status));
      byIdentity.set(o.key, x);
    }
    const twice = [...byIdentity].filter(([, x]) => x.applied > 1).map(([k]) => k);
    const never = [...byIdentity].filter(([, x]) => x.applied === 0 && x.lost === 0).map(([k]) => k);
    const rejected = history.ops.filter((o) => o.outcome === 'rejected').length;
    assert.equal(byIdentity.size, s.identities);
    assert.deepEqual(twice, [], 'no identity applied twice');
    assert.deepEqual(never, [], 'every identity applied (or its answer lost with a killed replica)');
    assert.equal(rejected, 0, 'nothing in order was rejected');

    // Final state per device.
    const wrong: string[] = [];
    for (const [device, want] of s.finals) {
      const r = await fetch(`${replicas.urls[1]}/v1/devices/acme/${device}`);
      const got = (await r.json()) as { boot_id: string; sequence: number; state: string };
      if (got.boot_id !== want.boot_id || got.sequence !== want.sequence || got.state !== want.state)
        wrong.push(`${device}: ${JSON.stringify(got)} ≠ ${JSON.stringify(want)}`);
    }
    assert.deepEqual(wrong, []);

    // One notification per transition (a re-delivery repeats its Idempotency-Key).
    await delivered(replicas, () => `${sink.requests.length} notifications`, undefined, 3000, 60_000);
    const notifies = sink.requests.filter((r) => r.body?.kind === 'event' && r.body?.action === 'notify');
    const distinct = new Set(notifies.map((r) => r.headers['idempotency-key']));

    // The accounting invariant on each replica (a killed replica's counters went with it).
    const stats = await Promise.all(
      replicas.urls.map(
        async (u) =>
          (await (await fetch(`${u}/v1/stats`)).json()) as { received: number; applied: number; duplicate: number; rejected: Record<string, number> },
      ),
    );
    const lost = history.ops.filter(History.indeterminate).length;
    console.log(
      `device events under chaos: ${s.sent} events sent (${s.identities} identities), ${history.ops.length} attempts, ${lost} lost with a killed replica; ` +
        `applied answers ${[...byIdentity.values()].reduce((a, x) => a + x.applied, 0)}, rejected ${rejected}; notifications ${distinct.size} distinct ` +
        `(${notifies.length} calls) for ${s.transitions} transitions; stats ${JSON.stringify(stats)}`,
    );
    assert.equal(distinct.size, s.transitions, 'one notification per transition');
    // A repeat (the same Idempotency-Key twice) only for a call the receiver took just before a kill.
    const against = repeatsAgainstKills(notifies, replicas.kills, 2000);
    assert.deepEqual(against.unexplained.slice(0, 5), [], 'every repeated notification is explained by a kill');
    assert.ok(against.most <= replicas.kills.length + 1, `no notification arrived more than once per kill (${against.most})`);
    // received = applied + duplicate + rejected holds by construction (each request is counted with its outcome);
    // what can fail is the count itself: the replica that was never killed must have counted exactly the requests
    // the client got an answer from it for, each in its bucket.
    const fromSurvivor = history.ops.filter((o) => o.replica === 1 && o.status !== 0);
    const bucket = (outcome: string) => fromSurvivor.filter((o) => o.outcome === outcome).length;
    assert.deepEqual(
      { received: stats[1]!.received, applied: stats[1]!.applied, duplicate: stats[1]!.duplicate },
      { received: fromSurvivor.length, applied: bucket('applied'), duplicate: bucket('duplicate') },
      "the surviving replica's accounting is the client's own count of its answers",
    );
    assert.ok(lost > 0, 'the kills really cut requests off');
  } finally {
    await replicas.stop();
    await sink.close();
    await redis.stop();
    dir.remove();
  }
});
