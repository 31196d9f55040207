// needs: redis
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startSink } from '../fakes/http-fake.js';
import { metric, post } from '../helpers/load.js';
import { startRedis } from '../helpers/redis.js';
import { tempDir } from '../helpers/tmp.js';
import { until } from '../helpers/wait.js';
import { startReplicas } from './harness.js';

const KEYS = 20;
const TTL_S = 10;

// a replica is SIGSTOPped while it holds leases with calls
// in flight, for longer than the lease and the incidents' TTL, while another
// replica takes the deliveries over and decides newer changes. When it is
// continued, nothing it still holds may land: its settles are refused by the
// fencing token and it makes no call with what it held.
test(`pause: a replica SIGSTOPped mid-delivery for longer than the TTL makes no stale write when continued`, async () => {
  const redis = await startRedis();
  const sink = await startSink(200, {});
  sink.faults = () => 'hang';
  const dirA = tempDir();
  const dirB = tempDir();
  const config = `incidents: { ttl_seconds: ${TTL_S} }\ndelivery: { lease_ms: 5000, base_delay_ms: 50, max_delay_ms: 200 }\nadapters: [ { name: hook, type: webhook, url: "${sink.url}/in", timeout_ms: 4000 } ]\n`;
  const a = await startReplicas(1, redis.url, dirA.path, config);
  let b: Awaited<ReturnType<typeof startReplicas>> | null = null;
  try {
    const body = (k: number, severity: string) => ({ element_id: `cmts-${k}`, fault_class: 'RF_IMPAIR', root_cause_id: 'node-9', severity });
    for (let k = 0; k < KEYS; k++) assert.equal((await post(`${a.urls[0]}/v1/incidents`, body(k, 'MAJOR'))).body.decision, 'CREATE');
    // Every key's create is in flight (a pass waits for its slowest call, so the last ones may come with the first retries).
    const keysCalled = () => new Set(sink.requests.map((r) => r.body.key)).size;
    await until(
      () => keysCalled() === KEYS,
      20_000,
      () => `${keysCalled()} keys called`,
    );
    a.procs[0]!.proc.kill('SIGSTOP');
    const pausedAt = Date.now();
    const held = sink.requests.length;
    const since = (n: number, action: string) =>
      new Set(
        sink.requests
          .slice(n)
          .filter((r) => r.body.action === action)
          .map((r) => r.body.key),
      ).size;

    // The other replica takes over once the leases run out, and decides newer changes.
    sink.faults = () => 'ok';
    b = await startReplicas(1, redis.url, dirB.path, config);
    await until(
      () => since(held, 'create') === KEYS,
      20_000,
      () => `${since(held, 'create')} taken over`,
    );
    for (let k = 0; k < KEYS; k++) assert.equal((await post(`${b.urls[0]}/v1/incidents`, body(k, 'CRITICAL'))).body.decision, 'UPDATE');
    await until(
      () => since(held, 'update') === KEYS,
      20_000,
      () => `${since(held, 'update')} updates delivered`,
    );
    // Paused past the lease and the TTL.
    await new Promise((r) => setTimeout(r, Math.max(0, TTL_S * 1000 + 2000 - (Date.now() - pausedAt))));
    const before = sink.requests.length;
    a.procs[0]!.proc.kill('SIGCONT');
    const pausedMs = Date.now() - pausedAt;
    // Its calls time out, its settles are refused; give it a few passes to do anything else.
    const refused = () => metric(a.urls[0]!, /^onceonly_deliveries_total\{adapter="hook",outcome="lost_lease",reason="[^"]*"\} (\d+)/m);
    await until(
      async () => (await refused()) > 0,
      10_000,
      () => 'stale settles',
    );
    await new Promise((r) => setTimeout(r, 5000)); // its calls' timeouts (4 s) have all fired by now
    const after = sink.requests.slice(before);
    const refusedSettles = await refused();
    const lastPerKey = new Map<string, { action: string; severity: string }>();
    for (const r of sink.requests) lastPerKey.set(r.body.key, { action: r.body.action, severity: r.body.severity });
    console.log(
      `pause: replica paused ${pausedMs} ms (lease 5000 ms, TTL ${TTL_S * 1000} ms) with ${held} calls made; the other delivered ${KEYS} creates and ${KEYS} updates; ` +
        `after SIGCONT: ${refusedSettles} settles refused by the fencing token, ${after.length} calls made`,
    );
    assert.deepEqual(after, [], 'the continued replica made no call with what it held');
    assert.deepEqual(
      [...new Set([...lastPerKey.values()].map((x) => `${x.action} ${x.severity}`))],
      ['update CRITICAL'],
      'the newest decision is the last word at the receiver',
    );
    assert.equal(lastPerKey.size, KEYS);
  } finally {
    a.procs[0]!.proc.kill('SIGCONT');
    await a.stop();
    await b?.stop();
    await sink.close();
    await redis.stop();
    dirA.remove();
    dirB.remove();
  }
});
