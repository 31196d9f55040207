// needs: redis
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { spawnServer, type ServerProcess } from '../helpers/process.js';
import { startRedis, type RedisServer } from '../helpers/redis.js';
import { tempDir } from '../helpers/tmp.js';

/**
 * One tenant's data never fails a replica open for everyone: a tenant that
 * sends ten 10,000-line batches at once, then grows to 200,000 live keys,
 * then stores 200 silences at the size bound, while another tenant keeps deciding and
 * listing. The other tenant's decisions are never provisional, /readyz never
 * turns 503, and the heavy tenant's own lines are decided on the store.
 * One replica with the default fail-open settings, on a Redis of its own.
 */
const HEAVY = 'heavy-tenant-token-0123456789';
const LIGHT = 'light-tenant-token-0123456789';
let redis: RedisServer;
let server: ServerProcess;
let dir: ReturnType<typeof tempDir>;

before(async () => {
  redis = await startRedis();
  dir = tempDir();
  const cfg = join(dir.path, 'c.yaml');
  writeFileSync(
    cfg,
    [
      `failopen: { journal_path: ${join(dir.path, 'j.db')} }`,
      'tenants:',
      `  - { id: heavy, tokens: [${HEAVY}], rate_limit: { per_second: 1000000, burst: 1000000 } }`,
      `  - { id: light, tokens: [${LIGHT}] }`,
    ].join('\n'),
  );
  server = await spawnServer(['--port', '0', '--store', redis.url, '--config', cfg]);
});
after(async () => {
  await server?.stop('SIGKILL');
  await redis?.stop();
  dir?.remove();
});

const call = async (token: string, method: string, path: string, body?: string, type = 'application/json') => {
  const res = await fetch(`${server.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': type }) },
    ...(body === undefined ? {} : { body }),
  });
  return { status: res.status, text: await res.text() };
};

/** The light tenant decides, lists and reads /readyz on a loop until `stop` resolves; answers what it saw. */
async function lightTenant(stop: Promise<unknown>) {
  const seen = { decisions: 0, provisional: 0, failed: [] as string[], notReady: 0, lists: 0 };
  let done = false;
  void stop.finally(() => (done = true));
  for (let i = 0; !done; i++) {
    const r = await call(
      LIGHT,
      'POST',
      '/v1/incidents',
      JSON.stringify({ element_id: `light-${i % 50}`, fault_class: 'LOS', root_cause_id: 'cut', severity: 'MAJOR' }),
    );
    if (r.status !== 200) seen.failed.push(`${r.status} ${r.text.slice(0, 200)}`);
    else {
      seen.decisions++;
      if (JSON.parse(r.text).provisional) seen.provisional++;
    }
    if (i % 10 === 0) {
      const l = await call(LIGHT, 'GET', '/v1/incidents?limit=100');
      if (l.status === 200) seen.lists++;
      else seen.failed.push(`list ${l.status} ${l.text.slice(0, 200)}`);
      if ((await fetch(`${server.url}/readyz`)).status !== 200) seen.notReady++;
    }
    await new Promise((r) => setTimeout(r, 20));
  }
  return seen;
}

const batch = (round: number, n: number) =>
  `${Array.from({ length: n }, (_, i) => JSON.stringify({ element_id: `heavy-${round}-${i}`, fault_class: 'LOS', root_cause_id: 'cut', severity: 'MAJOR' })).join('\n')}\n`;

async function heavyBatches(from: number, count: number) {
  const answers = await Promise.all(
    Array.from({ length: count }, (_, b) => call(HEAVY, 'POST', '/v1/incidents', batch(from + b, 10_000), 'application/x-ndjson')),
  );
  const lines = answers.flatMap((a) => {
    assert.equal(a.status, 200, a.text.slice(0, 300));
    return a.text
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l));
  });
  return {
    lines: lines.length,
    creates: lines.filter((l) => l.decision === 'CREATE' && l.provisional === false).length,
    provisional: lines.filter((l) => l.provisional === true).length,
    errors: lines.filter((l) => l.error).length,
  };
}

const assertUnharmed = (seen: Awaited<ReturnType<typeof lightTenant>>, what: string) => {
  assert.ok(seen.decisions >= 3, `the light tenant kept deciding during ${what} (${seen.decisions})`);
  assert.equal(seen.provisional, 0, `no provisional answer for the light tenant during ${what}`);
  assert.deepEqual(seen.failed, [], `nothing the light tenant sent failed during ${what}`);
  assert.equal(seen.notReady, 0, `/readyz stayed 200 during ${what}`);
};

test('ten 10,000-line batches at once: every line decided on the store; the other tenant never provisional', async () => {
  const heavy = heavyBatches(0, 10);
  const seen = await lightTenant(heavy);
  const r = await heavy;
  console.log(`ten batches: ${JSON.stringify(r)}; light tenant: ${JSON.stringify({ ...seen, failed: seen.failed.length })}`);
  assert.deepEqual(r, { lines: 100_000, creates: 100_000, provisional: 0, errors: 0 });
  assertUnharmed(seen, 'the batches');
});

test('200,000 live keys of one tenant: the other tenant lists its own, never provisional', async () => {
  const heavy = heavyBatches(10, 10);
  const seen = await lightTenant(heavy);
  assert.deepEqual(await heavy, { lines: 100_000, creates: 100_000, provisional: 0, errors: 0 });
  assertUnharmed(seen, 'the growth to 200,000 keys');
  // Listing beside 200,000 keys of another tenant: the light tenant's 50.
  for (let i = 0; i < 50; i++) {
    const r = await call(
      LIGHT,
      'POST',
      '/v1/incidents',
      JSON.stringify({ element_id: `light-${i}`, fault_class: 'LOS', root_cause_id: 'cut', severity: 'MAJOR' }),
    );
    assert.equal(r.status, 200);
  }
  const t0 = performance.now();
  const l = await call(LIGHT, 'GET', '/v1/incidents?limit=100');
  const ms = performance.now() - t0;
  assert.equal(l.status, 200, l.text.slice(0, 300));
  const listed = JSON.parse(l.text) as { incidents?: unknown[] } | unknown[];
  const items = Array.isArray(listed) ? listed : (listed.incidents ?? []);
  assert.equal(items.length, 50, `the light tenant sees its 50 incidents, none of the other tenant (${items.length}: ${l.text.slice(0, 200)})`);
  console.log(`listing 50 of the light tenant beside 200,000 of the heavy one: ${ms.toFixed(0)} ms`);
});

test('200 silences at the size bound (16 KB each): reloads never fail the replica open; a 256 KB one is refused', async () => {
  const silence = (i: number, chars: number) =>
    JSON.stringify({
      matchers: Array.from({ length: 64 }, (_, m) => ({
        name: `l${m}`,
        value: `${String(i).padStart(4, '0')}-${'x'.repeat(chars)}`,
        isRegex: false,
        isEqual: true,
      })),
      startsAt: new Date().toISOString(),
      endsAt: new Date(Date.now() + 3_600_000).toISOString(),
      createdBy: 'heavy',
      comment: 'large',
    });
  const huge = await call(HEAVY, 'POST', '/api/v2/silences', silence(-1, 4090));
  assert.equal(huge.status, 400, huge.text.slice(0, 300));
  const silences = (async () => {
    for (let i = 0; i < 200; i++) {
      const r = await call(HEAVY, 'POST', '/api/v2/silences', silence(i, 240));
      assert.equal(r.status, 200, r.text.slice(0, 300));
    }
    // Let the replicas reload them a few times while the light tenant goes on.
    await new Promise((r) => setTimeout(r, 5000));
  })();
  const seen = await lightTenant(silences);
  await silences;
  assertUnharmed(seen, 'the silences');
});
