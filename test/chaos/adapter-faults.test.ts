import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startServicenowFake } from '../fakes/servicenow-fake.js';
import type { Fault, Recorded } from '../fakes/http-fake.js';
import { fire, metric } from '../helpers/load.js';
import { runCli, spawnServer } from '../helpers/process.js';
import { tempDir } from '../helpers/tmp.js';
import { until } from '../helpers/wait.js';

const N = Number(process.env.CHAOS_VIOLATIONS ?? 5000);
const PERMANENT_EVERY = 100; // one violation in 100 has its first create refused 400

/** mulberry32: a seeded PRNG, so a failing run can be repeated exactly. */
function prng(seed: number) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// a ServiceNow that fails
// 30% of calls with 500, 10% with 429 and Retry-After, and applies-then-drops
// 5%, plus one permanent 400 for every 100th violation. Real server process,
// SQLite store, real time.
test(`adapter chaos: ${N} violations → exactly ${N} records; no retry before Retry-After; dead letters = permanent errors`, async () => {
  const started = Date.now();
  const snow = await startServicenowFake();
  const dir = tempDir();
  const seed = Number(process.env.FAULT_SEED ?? 20261130);
  const random = prng(seed);
  const keyOf = (r: Recorded): string | undefined =>
    r.method === 'GET'
      ? /^correlation_id=([^^]*)/.exec(r.query.get('sysparm_query') ?? '')?.[1]
      : r.method === 'POST'
        ? (r.body as { correlation_id?: string }).correlation_id
        : snow.records.get(r.path.split('/').pop()!)?.correlation_id;
  const permanent = new Set<string>(); // process ids whose first POST is refused
  const refused = new Set<string>();
  const notBefore = new Map<string, number>();
  const early: string[] = [];
  const injected = { e500: 0, e429: 0, drop: 0, e400: 0 };
  snow.faults = (r): Fault => {
    const key = keyOf(r);
    if (key !== undefined) {
      const nb = notBefore.get(key);
      if (nb !== undefined && r.at < nb) early.push(`${key}: ${nb - r.at} ms early`);
    }
    const processId =
      r.method === 'POST'
        ? String((r.body as { short_description?: string }).short_description ?? '')
            .split(' on ')[1]
            ?.split(' ')[0]
        : undefined;
    if (processId && permanent.has(processId) && !refused.has(processId)) {
      refused.add(processId);
      injected.e400++;
      return { status: 400, body: { error: { message: 'Invalid field: u_line' }, status: 'failure' } };
    }
    const x = random();
    if (x < 0.3) {
      injected.e500++;
      return { status: 500 };
    }
    if (x < 0.4) {
      injected.e429++;
      if (key !== undefined) notBefore.set(key, r.at + 1000);
      return { status: 429, retryAfter: 1 };
    }
    if (x < 0.45 && r.method !== 'GET') {
      injected.drop++;
      return 'apply_then_drop';
    }
    return 'ok';
  };
  const config = join(dir.path, 'c.yaml');
  writeFileSync(
    config,
    `delivery: { max_retries: 40, base_delay_ms: 10, max_delay_ms: 200, lease_ms: 10000 }
adapters:
  - { name: snow, type: servicenow, instance_url: "${snow.url}", username: onceonly, password: secret, timeout_ms: 3000 }
`,
  );
  const s = await spawnServer(['--port', '0', '--store', `sqlite:${join(dir.path, 'o.db')}`, '--config', config]);
  try {
    const shots = Array.from({ length: N }, (_, i) => {
      const p = `proc-${i}`;
      if (i % PERMANENT_EVERY === 0) permanent.add(p);
      return { url: `${s.url}/v1/violations`, body: { process_id: p, rule_id: 'nelson_2', timestamp: 1770000000, value: 13, center: 10, ucl: 12, lcl: 8 } };
    });
    const answers = await fire(shots, 32);
    assert.ok(answers.every((a) => a.status === 200 && a.body.decision === 'CREATE'));

    const permanentCount = N / PERMANENT_EVERY;
    await until(
      async () => (await metric(s.url, /^onceonly_deliveries_pending (\d+)/m)) === 0 && snow.records.size >= N - permanentCount,
      240_000,
      () => `records ${snow.records.size}`,
    );
    const dead = await metric(s.url, /^onceonly_dead_letters (\d+)/m);
    console.log(
      `adapter chaos (seed ${seed}): ${N} violations, injected ${JSON.stringify(injected)}, ITSM requests ${snow.requests.length}, records ${snow.records.size}, dead letters ${dead}, early retries ${early.length}, ${((Date.now() - started) / 1000).toFixed(1)} s`,
    );
    assert.equal(dead, permanentCount, 'dead letters equal the permanent errors injected');
    assert.equal(injected.e400, permanentCount);
    assert.equal(snow.records.size, N - permanentCount);
    assert.deepEqual(early, [], 'no retry before its Retry-After');
    assert.ok(injected.e429 > 100 && injected.drop > 50 && injected.e500 > 500, 'the faults really happened');

    const listed = runCli(['dead-letters', 'list', '--url', s.url]);
    assert.equal(listed.status, 0, listed.stderr);
    assert.equal((listed.stdout.match(/HTTP 400/g) ?? []).length, permanentCount);
    const retried = runCli(['dead-letters', 'retry', '--all', '--url', s.url]);
    assert.equal(retried.status, 0, retried.stderr);
    assert.match(retried.stdout, new RegExp(`re-queued ${permanentCount} of ${permanentCount} dead letter`));
    await until(
      () => snow.records.size === N,
      60_000,
      () => `records ${snow.records.size}`,
    );
    await until(
      async () => (await metric(s.url, /^onceonly_deliveries_pending (\d+)/m)) === 0,
      60_000,
      () => 'pending',
    );
    assert.equal(snow.records.size, N, `exactly ${N} records`);
    assert.equal(new Set([...snow.records.values()].map((r) => r.correlation_id)).size, N, 'one per key');
    assert.equal(await metric(s.url, /^onceonly_dead_letters (\d+)/m), 0);
  } finally {
    await s.stop();
    await snow.close();
    dir.remove();
  }
});
