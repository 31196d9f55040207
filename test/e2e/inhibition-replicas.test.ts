// needs: redis
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { hookedReplicas } from '../helpers/hooked-replicas.js';
import { postJson } from '../helpers/process.js';
import { until } from '../helpers/wait.js';

const quiet = (ms: number) => new Promise((r) => setTimeout(r, ms));
const alarm = (element_id: string, fault_class: string, severity: string, root_cause_id = 'rc-17') => ({ element_id, fault_class, root_cause_id, severity });

// The telecom case: a node goes down (NODE_DOWN on its root cause); the
// MAJOR and MINOR link alarms that share the root cause are muted while it is
// live, on both replicas alike; its close releases the ones still live, each
// delivered once.
test('inhibition: a NODE_DOWN mutes the link alarms of its root cause on both replicas and over a restart; its close releases them once', async () => {
  const h = await hookedReplicas(
    `inhibit_rules:\n  - source_matchers: ['fault_class="NODE_DOWN"']\n    target_matchers: ['severity=~"MAJOR|MINOR"']\n    equal: [root_cause_id]\n`,
  );
  let [a, b] = h.replicas;
  const got = h.deliveredFor;
  try {
    const node = await postJson(`${a.url}/v1/incidents`, alarm('node-1', 'NODE_DOWN', 'CRITICAL'));
    assert.deepEqual([node.body.decision, node.body.muted], ['CREATE', null], 'the source itself is not muted');
    const source = node.body.dedup_key as string;

    const targets = ['link-1', 'link-2', 'link-3', 'link-4'];
    for (const [i, el] of targets.entries()) {
      const r = await postJson(`${(i % 2 ? a : b).url}/v1/incidents`, alarm(el, 'LINK_DOWN', i % 2 ? 'MAJOR' : 'MINOR'));
      assert.deepEqual([r.body.decision, r.body.muted], ['CREATE', { by: 'inhibition', id: source }], `${el} through replica ${i % 2 ? 'A' : 'B'}`);
    }
    const critical = await postJson(`${b.url}/v1/incidents`, alarm('link-9', 'LINK_DOWN', 'CRITICAL'));
    assert.equal(critical.body.muted, null, 'a CRITICAL link is not a target');
    const elsewhere = await postJson(`${a.url}/v1/incidents`, alarm('link-8', 'LINK_DOWN', 'MAJOR', 'rc-99'));
    assert.equal(elsewhere.body.muted, null, 'another root cause is not inhibited');

    // link-4 changes severity while muted; link-3 clears and closes while muted.
    await postJson(`${a.url}/v1/incidents`, alarm('link-4', 'LINK_DOWN', 'MAJOR'));
    const link3 = await postJson(`${b.url}/v1/incidents`, alarm('link-3', 'LINK_DOWN', 'MAJOR'));
    await until(
      () => ['node-1', 'link-9', 'link-8'].every((e) => got(e).length === 1) || null,
      10_000,
      () => 'the uninhibited alarms were not delivered',
    );
    assert.equal((await fetch(`${a.url}/v1/incidents/${link3.body.dedup_key}`, { method: 'DELETE' })).status, 204);
    await quiet(2500);
    for (const el of targets) assert.deepEqual(got(el), [], `${el} held by both replicas`);

    // A restart of both forgets nothing: the source is in Redis, and so are the held deliveries.
    [a, b] = await h.restart();
    await quiet(2500);
    for (const el of targets) assert.deepEqual(got(el), [], `${el} still held after the restart`);
    assert.deepEqual((await postJson(`${a.url}/v1/incidents`, alarm('link-1', 'LINK_DOWN', 'MINOR'))).body.muted, { by: 'inhibition', id: source });

    assert.equal((await fetch(`${b.url}/v1/incidents/${source}`, { method: 'DELETE' })).status, 204, 'the node comes back');
    await until(
      () => ['link-1', 'link-2', 'link-4'].every((e) => got(e).length > 0) || null,
      10_000,
      () => 'the targets were not released',
    );
    await quiet(2000);
    assert.deepEqual(got('link-1'), ['create:MINOR']);
    assert.deepEqual(got('link-2'), ['create:MAJOR']);
    assert.deepEqual(got('link-4'), ['create:MAJOR'], 'its latest state, once');
    assert.deepEqual(got('link-3'), [], 'created and closed while inhibited: nothing');
    const after = await postJson(`${b.url}/v1/incidents`, alarm('link-5', 'LINK_DOWN', 'MAJOR'));
    assert.equal(after.body.muted, null, 'the closed source inhibits nothing');
  } finally {
    await h.stop();
  }
});
