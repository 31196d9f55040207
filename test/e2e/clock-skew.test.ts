// needs: redis postgres
/**
 * A replica whose clock runs 2 h ahead (a Date preloaded with `--import`)
 * beside one whose clock is right, sharing Postgres or Redis: every fault,
 * sent to both in turn, makes one ticket. The store's clock decides: Redis
 * reads its TIME, and Postgres replicas take their time from the server's
 * clock, so a host's broken NTP cannot expire a live key or let a lease run
 * out early.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startSink } from '../fakes/http-fake.js';
import { dropSchema, PG_URL } from '../helpers/postgres.js';
import { postJson, spawnServer } from '../helpers/process.js';
import { startRedis } from '../helpers/redis.js';
import { tempDir } from '../helpers/tmp.js';
import { until } from '../helpers/wait.js';

const SKEW = new URL('../fixtures/skewed-clock.mjs', import.meta.url).pathname;
const FAULTS = 20;

for (const backend of ['postgres', 'redis'] as const)
  test(`on ${backend}, a replica 2 h ahead and one on time: each fault makes one ticket`, async (t) => {
    const dir = tempDir();
    const hook = await startSink(200, {});
    const redis = backend === 'redis' ? await startRedis() : null;
    const schema = `oo_skew_${process.pid}`;
    const store = redis ? redis.url : `${PG_URL}?schema=${schema}`;
    const cfg = (n: string) => {
      const p = join(dir.path, `${n}.yaml`);
      writeFileSync(
        p,
        `incidents: { ttl_seconds: 600 }\nfailopen: { journal_path: ${join(dir.path, `${n}.db`)} }\n` +
          `adapters: [ { name: hook, type: webhook, url: "${hook.url}/in" } ]\n`,
      );
      return ['--port', '0', '--store', store, '--config', p];
    };
    const ahead = await spawnServer(cfg('ahead'), { NODE_OPTIONS: `--import ${SKEW}` });
    const onTime = await spawnServer(cfg('on-time'));
    t.after(async () => {
      await ahead.stop();
      await onTime.stop();
      await hook.close();
      await redis?.stop();
      if (!redis) await dropSchema(schema);
      dir.remove();
    });
    // The preload took: the skewed replica's own clock is 2 h ahead (its log lines' times say so).
    const skewed = await postJson(`${ahead.url}/v1/incidents`, { element_id: 'probe', fault_class: 'SKEW', root_cause_id: 'probe', severity: 'INFO' });
    assert.equal(skewed.status, 200);

    for (let round = 0; round < 4; round++)
      for (let f = 0; f < FAULTS; f++) {
        const r = await postJson(`${(round + f) % 2 ? ahead.url : onTime.url}/v1/incidents`, {
          element_id: `olt-${f}`,
          fault_class: 'LOS',
          root_cause_id: 'cut',
          severity: 'MAJOR',
        });
        assert.equal(r.status, 200, JSON.stringify(r.body));
        assert.equal(
          r.body.decision,
          round === 0 ? 'CREATE' : 'SUPPRESS',
          `fault ${f}, round ${round}, answered by ${(round + f) % 2 ? 'the replica ahead' : 'the one on time'}`,
        );
      }
    // Every create delivered once; nothing else goes out (no expiry, no second create).
    await until(
      () => hook.requests.length >= FAULTS + 1 || null,
      20_000,
      () => `${hook.requests.length} deliveries`,
    );
    await new Promise((r) => setTimeout(r, 1500));
    const creates = hook.requests.filter((r) => r.body.action === 'create' && r.body.data.fault_class === 'LOS');
    assert.equal(creates.length, FAULTS, hook.requests.map((r) => `${r.body.action} ${r.body.data.element_id}`).join(', '));
    assert.equal(new Set(creates.map((r) => r.body.key)).size, FAULTS);
    // What a person reads is on the store's clock: the key was first seen minutes ago, not 2 h from now.
    const shown = (await (await fetch(`${ahead.url}/v1/incidents/${creates[0]!.body.key}`)).json()) as { created_at: string };
    assert.ok(Math.abs(Date.parse(shown.created_at) - Date.now()) < 5 * 60_000, `created_at ${shown.created_at} is on the store's clock`);
  });
