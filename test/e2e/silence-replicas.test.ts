// needs: redis
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { hookedReplicas } from '../helpers/hooked-replicas.js';
import { postJson } from '../helpers/process.js';
import { until } from '../helpers/wait.js';

const incident = (k: number, severity = 'MAJOR') => ({ element_id: `ne-${k}`, fault_class: 'LOS', root_cause_id: 'fiber-cut-3', severity });
const quiet = (ms: number) => new Promise((r) => setTimeout(r, ms));

// Two replicas on one Redis: a silence made through one mutes what the other
// decides and delivers; it holds over a restart of both; its expiry, made
// through the other, releases each key once, with its latest state.
test('two replicas share silences: made on A, applied by B, held over a restart, released once', async () => {
  const h = await hookedReplicas();
  const { hook } = h;
  const creates = (k: number) => h.deliveredFor(`ne-${k}`);
  try {
    const [a, b] = h.replicas;
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
    const [a2, b2] = await h.restart();
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
    await h.stop();
  }
});
