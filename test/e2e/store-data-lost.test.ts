// needs: redis postgres
/**
 * A store that loses its data is never gone on from silently. A Redis
 * restarted without persistence while deliveries waited for a failing
 * receiver, and a Postgres whose epoch count goes back (as a restore from an
 * older backup does): the replica counts onceonly_store_data_lost_total,
 * logs one error naming what cannot be recovered, and /readyz says when.
 * And a Redis that would lose acknowledged data silently is refused at start,
 * naming the setting, unless the operator accepts it.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { startFake } from '../fakes/http-fake.js';
import { dropSchema, PG_URL } from '../helpers/postgres.js';
import { postJson, spawnServer, type ServerProcess } from '../helpers/process.js';
import { startRedis } from '../helpers/redis.js';
import { tempDir } from '../helpers/tmp.js';
import { until } from '../helpers/wait.js';

const lostCount = async (s: ServerProcess) =>
  Number(/^onceonly_store_data_lost_total\{store="[a-z-]+"\} (\d+)/m.exec(await (await fetch(`${s.url}/metrics`)).text())?.[1] ?? NaN);

async function replica(store: string, dir: string, extra = '') {
  // A receiver that fails every call: the creates wait in the store's delivery queue.
  const receiver = await startFake(() => ({ status: 503 }));
  const cfg = join(dir, 'c.yaml');
  writeFileSync(
    cfg,
    `failopen: { journal_path: ${join(dir, 'j.db')}, timeout_ms: 2000 }\ndelivery: { base_delay_ms: 60000, max_delay_ms: 60000 }\n` +
      `adapters: [ { name: hook, type: webhook, url: "${receiver.url}/in" } ]\n${extra}`,
  );
  const server = await spawnServer(['--port', '0', '--store', store, '--config', cfg]);
  return { server, receiver };
}

test('Redis restarted without persistence while creates wait: counted, logged, and /readyz says when', async (t) => {
  const dir = tempDir();
  const redis = await startRedis();
  const { server, receiver } = await replica(redis.url, dir.path);
  t.after(async () => {
    await server.stop();
    await receiver.close();
    await redis.stop();
    dir.remove();
  });
  for (let i = 0; i < 10; i++)
    assert.equal(
      (await postJson(`${server.url}/v1/incidents`, { element_id: `e${i}`, fault_class: 'LOS', root_cause_id: 'rc', severity: 'MAJOR' })).body.decision,
      'CREATE',
    );
  assert.equal(await lostCount(server), 0);
  assert.equal(((await (await fetch(`${server.url}/readyz`)).json()) as Record<string, unknown>).store_reset_at, undefined);
  await redis.kill('SIGKILL');
  await redis.restart();
  await until(
    async () => (await lostCount(server)) === 1 || null,
    20_000,
    () => server.stderr() + server.lines.slice(-5).join('\n'),
  );
  const lines = server.lines.filter((l) => l.includes('lost its data'));
  assert.equal(lines.length, 1, 'one error line');
  assert.match(lines[0]!, /"level":50/);
  assert.match(lines[0]!, /pending.*live keys.*silences.*cannot be recovered/);
  const ready = (await (await fetch(`${server.url}/readyz`)).json()) as Record<string, string>;
  assert.equal(ready.status, 'ready');
  assert.ok(Date.parse(ready.store_reset_at!) <= Date.now());
  // Once: the next looks compare with the new marker.
  await new Promise((r) => setTimeout(r, 6000));
  assert.equal(await lostCount(server), 1, 'counted once, not at every look');
});

test('Postgres whose epoch count goes back (a restore from an older backup): counted and logged', async (t) => {
  const dir = tempDir();
  const schema = `oo_epoch_${process.pid}`;
  const { server, receiver } = await replica(`${PG_URL}?schema=${schema}`, dir.path);
  const admin = new pg.Pool({ connectionString: PG_URL, max: 1 });
  t.after(async () => {
    await server.stop();
    await receiver.close();
    await admin.end();
    await dropSchema(schema);
    dir.remove();
  });
  await until(async () => Number((await admin.query(`SELECT seq FROM ${schema}.epoch`)).rows[0]?.seq ?? 0) >= 1 || null, 10_000);
  assert.equal(await lostCount(server), 0);
  await admin.query(`UPDATE ${schema}.epoch SET seq = 0`);
  await until(
    async () => (await lostCount(server)) === 1 || null,
    20_000,
    () => server.lines.slice(-5).join('\n'),
  );
  assert.equal(server.lines.filter((l) => l.includes('lost its data') && l.includes('count went back')).length, 1);
});

test('a Redis that loses acknowledged data silently is refused at start, naming the setting, unless accepted', async (t) => {
  const dir = tempDir();
  const bare = await startRedis();
  const evicting = await startRedis(['--appendonly', 'yes', '--maxmemory-policy', 'allkeys-lru']);
  const durable = await startRedis(['--appendonly', 'yes']);
  t.after(async () => {
    for (const r of [bare, evicting, durable]) await r.stop();
    dir.remove();
  });
  const env = { ONCEONLY_REDIS_ACCEPT_DATA_LOSS: '' };
  const cfg = (name: string, text = '') => {
    const p = join(dir.path, `${name}.yaml`);
    writeFileSync(p, `failopen: { journal_path: ${join(dir.path, `${name}.db`)} }\n${text}`);
    return p;
  };
  const refused = async (url: string, name: string) => {
    const err = await spawnServer(['--port', '0', '--store', url, '--config', cfg(name)], env).then(
      async (s) => {
        await s.stop();
        return null;
      },
      (e: Error) => e.message,
    );
    assert.ok(err, `${name}: refused`);
    return err;
  };
  assert.match(await refused(bare.url, 'bare'), /keeps nothing on disk \(appendonly no and no save points\)/);
  assert.match(await refused(evicting.url, 'evicting'), /maxmemory-policy is allkeys-lru/);
  for (const [url, name, text] of [
    [durable.url, 'durable', ''],
    [bare.url, 'accepted', 'redis: { accept_data_loss: true }\n'],
  ] as const) {
    const s = await spawnServer(['--port', '0', '--store', url, '--config', cfg(name, text)], env);
    assert.equal((await fetch(`${s.url}/readyz`)).status, 200, name);
    await s.stop();
  }
});
