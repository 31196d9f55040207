// needs: postgres
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startFaultProxy } from '../helpers/fault-proxy.js';
import { postJson, type ServerProcess, spawnServer } from '../helpers/process.js';
import { dropSchema, PG_URL } from '../helpers/postgres.js';
import { tempDir } from '../helpers/tmp.js';

/**
 * A replica that starts while its store is away for a moment (a restart, a
 * reset, a network blip: what a rolling restart of the store or a replica
 * restarted mid-fault meets) keeps trying for a bounded time instead of
 * exiting at the first refused connection.
 */
test('a replica started while Postgres refuses connections keeps trying, starts once it answers, and decides on it', async () => {
  const schema = `oo_start_${randomBytes(4).toString('hex')}`;
  const u = new URL(PG_URL);
  const proxy = await startFaultProxy(`${u.hostname}:${u.port || 5432}`);
  const dir = tempDir();
  const config = join(dir.path, 'c.yaml');
  writeFileSync(config, `failopen: { journal_path: ${JSON.stringify(join(dir.path, 'journal.db'))} }\n`);
  const store = new URL(PG_URL);
  [store.hostname, store.port] = [proxy.address.slice(0, proxy.address.lastIndexOf(':')), proxy.address.slice(proxy.address.lastIndexOf(':') + 1)];
  store.searchParams.set('schema', schema);
  proxy.refuse(true);
  const started = Date.now();
  const healing = new Promise<void>((r) =>
    setTimeout(() => {
      proxy.refuse(false);
      r();
    }, 2000),
  );
  let s: ServerProcess | undefined;
  try {
    s = await spawnServer(['--port', '0', '--store', store.toString(), '--config', config]);
    const waited = Date.now() - started;
    await healing;
    const tries = s.lines.filter((l) => l.includes('the store did not answer at start; trying again'));
    console.log(`listening ${waited} ms after the start, ${tries.length} tries logged while Postgres refused`);
    assert.ok(tries.length >= 1, 'each refused try is said');
    assert.ok(waited >= 2000, 'it listened only once Postgres answered');
    const r = await postJson(`${s.url}/v1/incidents`, { element_id: 'olt-1', fault_class: 'LOS', root_cause_id: 'rc', severity: 'MAJOR' });
    assert.equal(r.status, 200);
    assert.deepEqual([r.body.decision, r.body.provisional ?? false], ['CREATE', false], 'decided on the store');
  } finally {
    await healing;
    await s?.stop('SIGTERM');
    await proxy.close();
    await dropSchema(schema);
    dir.remove();
  }
});
