// needs: redis
/**
 * A decision that writes something to deliver wakes its replica's delivery
 * worker at once, rather than at the end of the worker's idle wait: with the
 * idle wait set to a minute, a create, an update and a close still reach the
 * receiver while the test waits ten seconds. Without the nudge none would.
 * On Redis the pass a decision wakes visits only the decided key's shard: a
 * handful of scripts, where a full pass runs two per shard (128).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pino } from 'pino';
import { startServer } from '../../src/app/start.js';
import { startFake } from '../fakes/http-fake.js';
import { tempDir } from '../helpers/tmp.js';
import { until } from '../helpers/wait.js';
import { startRedis, type RedisServer } from '../helpers/redis.js';

const incident = { element_id: 'olt-3', fault_class: 'LOS', root_cause_id: 'cut', severity: 'MAJOR' };

/** Scripts Redis ran since its counters were reset (INFO commandstats: EVALSHA and EVAL). */
const scriptsRun = (redis: RedisServer) =>
  [...redis.cli('INFO', 'commandstats').matchAll(/^cmdstat_eval(?:sha)?:calls=(\d+)/gm)].reduce((n, m) => n + Number(m[1]), 0);

for (const store of ['memory', 'sqlite', 'redis'] as const)
  test(`${store}: a create, an update and a close reach the receiver long before the worker's idle wait ends`, async () => {
    const receiver = await startFake(() => ({ status: 200, body: {} }));
    const dir = tempDir();
    const redis = store === 'redis' ? await startRedis() : null;
    const config = join(dir.path, 'c.yaml');
    writeFileSync(
      config,
      `adapters: [ { name: hook, type: webhook, url: "${receiver.url}/in" } ]\n${redis ? `failopen: { journal_path: ${JSON.stringify(join(dir.path, 'j.db'))} }\n` : ''}`,
    );
    const server = await startServer({
      port: 0,
      host: '127.0.0.1',
      store: redis ? redis.url : store === 'memory' ? 'memory:' : `sqlite:${join(dir.path, 'o.db')}`,
      configPath: config,
      logger: pino({ level: 'silent' }),
      delivery: { idleMs: 60_000 },
    });
    const post = (url: string, body?: unknown) =>
      server.app.inject({ method: 'POST', url, ...(body === undefined ? {} : { payload: body as object }) }).then((r) => r.json() as any);
    const actions = () => receiver.requests.map((r) => r.body?.action);
    try {
      // The worker's first pass ran at start and found nothing: it now waits its minute.
      await new Promise((r) => setTimeout(r, 300));
      redis?.cli('CONFIG', 'RESETSTAT');
      const key = (await post('/v1/incidents', incident)).dedup_key as string;
      await until(
        () => actions().includes('create') || null,
        10_000,
        () => `the create did not arrive: ${actions().join(', ')}`,
      );
      if (redis) {
        // The decision, then one shard's fan-out and lease, and the settle: far from a full pass's 128.
        const ran = scriptsRun(redis);
        assert.ok(ran > 0 && ran <= 12, `scripts run for one decision and its delivery: ${ran}`);
      }
      await post('/v1/incidents', { ...incident, severity: 'CRITICAL' });
      await until(
        () => actions().includes('update') || null,
        10_000,
        () => `the update did not arrive: ${actions().join(', ')}`,
      );
      const closed = await server.app.inject({ method: 'DELETE', url: `/v1/incidents/${encodeURIComponent(key)}` });
      assert.equal(closed.statusCode, 204);
      await until(
        () => actions().includes('close') || null,
        10_000,
        () => `the close did not arrive: ${actions().join(', ')}`,
      );
      assert.deepEqual(actions(), ['create', 'update', 'close']);
    } finally {
      await server.close();
      await receiver.close();
      await redis?.stop();
      dir.remove();
    }
  });
