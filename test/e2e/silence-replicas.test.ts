// needs: redis
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startSink } from '../fakes/http-fake.js';
import { postJson, spawnServer, type ServerProcess } from '../helpers/process.js';
import { startRedis } from '../helpers/redis.js';
import { tempDir } from '../helpers/tmp.js';
import { until } from '../helpers/wait.js';

const incident = (k: number, severity = 'MAJOR') => ({ element_id: `ne-${k}`, fault_class: 'LOS', root_cause_id: 'fiber-cut-3', severity });
const quiet = (ms: number) => new Promise((r) => setTimeout(r, ms));

// Two replicas on one Redis: a silence made through one mutes what the other
// decides and delivers; it holds over a restart of both; its expiry, made
// through the other, releases each key once, with its latest state.
test('two replicas share silences: made on A, applied by B, held over a restart, released once', async () => {
  const redis = await startRedis();
  const hook = await startSink(200, {});
  const dir = tempDir();
  const config = (n: number) => {
    const p = join(dir.path, `r${n}.yaml`);
    writeFileSync(p, `failopen:\n  journal_path: ${join(dir.path, `journal-${n}.db`)}\nadapters: [ { name: hook, type: webhook, url: "${hook.url}/in" } ]\n`);
    return p;
  };
  const start = () => Promise.all([1, 2].map((n) => spawnServer(['--port', '0', '--store', redis.url, '--config', config(n)])));
  let replicas: ServerProcess[] = [];
  const creates = (k: number) => hook.requests.filter((r) => r.body.data?.element_id === `ne-${k}`).map((r) => `${r.body.action}:${r.body.severity}`);
  try {
    replicas = await start();
    const [a, b] = replicas as [ServerProcess, ServerProcess];
    const made = await postJson(`${a.url}/api/v2/silences`, {
      matchers: [{ name: 'root_cause_id', value: 'fiber-cut-3', isRegex: false, isEqual: true }],
      startsAt: new Date().toISOString(),
      endsAt: new Date(Date.now() + 3_600_000).toISOString(),
      createdBy: 'noc',
      comment: 'splicing',
    });
    assert.equal(made.status, 200);
    const id = made.body.silenceID as string;
    const t0 = Date.now();
    // B answers `muted` once it has the silence: one probe key, re-sent until it does.
    // Printed, not asserted: by design it is the 500 ms poll plus one read; the bound here only stops a hang.
    await until(
      async () => (await postJson(`${b.url}/v1/incidents`, incident(0))).body.muted?.id === id || null,
      10_000,
      () => 'B never applied the silence',
    );
    console.log(`replica B applied a silence made on A after ${Date.now() - t0} ms`);

    for (let k = 1; k <= 5; k++) {
      const r = await postJson(`${(k % 2 ? a : b).url}/v1/incidents`, incident(k));
      assert.deepEqual([r.body.decision, r.body.muted], ['CREATE', { by: 'silence', id }]);
      await postJson(`${(k % 2 ? b : a).url}/v1/incidents`, incident(k, 'CRITICAL'));
    }
    await quiet(2500);
    // The probe's first decision was made before B had the silence, so it may have gone out then: the five may not.
    const others = () => hook.requests.filter((r) => r.body.data?.element_id !== 'ne-0').length;
    assert.equal(others(), 0, 'neither replica delivered anything the silence matches');

    // A restart of both: the silence and the held deliveries are in Redis.
    await Promise.all(replicas.map((r) => r.stop('SIGKILL')));
    replicas = await start();
    const [a2, b2] = replicas as [ServerProcess, ServerProcess];
    await quiet(2500);
    assert.equal(others(), 0, 'still held after the restart');

    const expired = await fetch(`${b2.url}/api/v2/silence/${id}`, { method: 'DELETE' });
    assert.equal(expired.status, 200);
    await until(
      () => [0, 1, 2, 3, 4, 5].every((k) => creates(k).length > 0) || null,
      10_000,
      () => `not all released: ${hook.requests.length}`,
    );
    await quiet(2000);
    assert.deepEqual(creates(0), ['create:MAJOR'], 'the probe key: one create, before the silence reached B or at its release');
    for (let k = 1; k <= 5; k++) assert.deepEqual(creates(k), ['create:CRITICAL'], `ne-${k}: one create with its latest state`);
    const after = await postJson(`${a2.url}/v1/incidents`, incident(9));
    assert.equal(after.body.muted, null, 'the expiry reached A too');
  } finally {
    await Promise.all(replicas.map((r) => r.stop('SIGKILL')));
    await hook.close();
    await redis.stop();
    dir.remove();
  }
});
