import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startSink } from '../fakes/http-fake.js';
import { fire } from '../helpers/load.js';
import { runCli, spawnServer } from '../helpers/process.js';
import { tempDir } from '../helpers/tmp.js';
import { until } from '../helpers/wait.js';
import { receiverQuiet } from '../helpers/settle.js';

// The receiver holds the first deliveries open, so the server is killed with
// decisions answered, some deliveries leased mid-call and some not yet fanned
// out. The restarted server takes them over once the dead worker's lease runs
// out, and each ticket arrives exactly once.
test('SIGKILL after the decision and before delivery: after a restart every ticket arrives exactly once', async () => {
  const hook = await startSink(200, {});
  hook.faults = () => 'hang';
  const dir = tempDir();
  const db = join(dir.path, 'o.db');
  const config = join(dir.path, 'c.yaml');
  writeFileSync(config, `delivery: { lease_ms: 1500 }\nadapters: [ { name: hook, type: webhook, url: "${hook.url}/t", timeout_ms: 1000 } ]\n`);
  const args = ['--port', '0', '--store', `sqlite:${db}`, '--config', config];
  let s = await spawnServer(args);
  try {
    const shots = Array.from({ length: 50 }, (_, i) => ({
      url: `${s.url}/v1/incidents`,
      body: { element_id: `olt-${i}`, fault_class: 'LOS', root_cause_id: 'cut', severity: 'MAJOR' },
    }));
    const answers = await fire(shots, 8);
    assert.ok(answers.every((a) => a.status === 200 && a.body.decision === 'CREATE'));
    await until(
      () => hook.requests.length > 0,
      10_000,
      () => 'no delivery started',
    );
    assert.equal(await s.stop('SIGKILL'), null);
    const beforeRestart = hook.requests.length;
    assert.ok(beforeRestart < 50 + 1, `at most one call per decision so far (${beforeRestart})`);

    hook.faults = () => 'ok';
    s = await spawnServer(args);
    const keys = new Set(answers.map((a) => a.body.dedup_key as string));
    const applied = () => hook.requests.slice(beforeRestart);
    await until(
      () => new Set(applied().map((r) => r.body.key)).size === keys.size,
      20_000,
      () => `${new Set(applied().map((r) => r.body.key)).size} of ${keys.size}`,
    );
    // A late duplicate would arrive within a lease (1.5 s): wait until the receiver has been quiet that long.
    await receiverQuiet(() => hook.requests, 2000);
    const perKey = new Map<string, number>();
    for (const r of applied()) perKey.set(r.body.key, (perKey.get(r.body.key) ?? 0) + 1);
    assert.deepEqual([...perKey.keys()].sort(), [...keys].sort());
    assert.ok(
      [...perKey.values()].every((n) => n === 1),
      `each exactly once: ${JSON.stringify([...perKey.values()])}`,
    );
    assert.ok(applied().every((r) => r.headers['idempotency-key'] === `${r.body.key}:create:1`));

    // The operator's CLI against the restarted server: nothing is dead; misuse is a clear error.
    const list = runCli(['dead-letters', 'list', '--url', s.url]);
    assert.deepEqual([list.status, list.stdout.trim()], [0, 'no dead letters']);
    const none = runCli(['dead-letters', 'retry', '--url', s.url]);
    assert.equal(none.status, 2);
    assert.match(none.stderr, /give one dead letter id, or --all/);
    const unknown = runCli(['dead-letters', 'retry', '7.hook', '--url', s.url]);
    assert.equal(unknown.status, 1);
    assert.match(unknown.stderr, /7\.hook: HTTP 404: no dead letter "7\.hook"/);
    const down = runCli(['dead-letters', 'list', '--url', 'http://127.0.0.1:9']);
    assert.equal(down.status, 1);
    assert.match(down.stderr, /no answer from the server/);
  } finally {
    await s.stop('SIGKILL');
    await hook.close();
    dir.remove();
  }
});

test('SIGTERM lets the deliveries in flight finish, then exits 0; nothing is delivered twice after a restart', async () => {
  const hook = await startSink(200, {});
  hook.faults = () => ({ delayMs: 800 });
  const dir = tempDir();
  const config = join(dir.path, 'c.yaml');
  writeFileSync(config, `adapters: [ { name: hook, type: webhook, url: "${hook.url}/t" } ]\n`);
  const args = ['--port', '0', '--store', `sqlite:${join(dir.path, 'o.db')}`, '--config', config];
  let s = await spawnServer(args);
  try {
    const shots = Array.from({ length: 5 }, (_, i) => ({
      url: `${s.url}/v1/violations`,
      body: { process_id: `p-${i}`, rule_id: 'nelson_1', timestamp: 1770000000, value: 13, center: 10, ucl: 12, lcl: 8 },
    }));
    assert.ok((await fire(shots, 5)).every((a) => a.status === 200 && a.body.decision === 'CREATE'));
    await until(
      () => hook.requests.length === 5,
      10_000,
      () => `${hook.requests.length} in flight`,
    );
    assert.equal(await s.stop('SIGTERM'), 0, 'exit 0 after the drain');
    const settled = s.lines.filter((l) => /delivery parked|will retry|failed; the lease/.test(l));
    assert.deepEqual(settled, [], 'the in-flight calls were answered and settled before exit');

    hook.faults = () => 'ok';
    s = await spawnServer(args);
    await receiverQuiet(() => hook.requests, 1500);
    assert.equal(hook.requests.length, 5, 'settled before the exit: nothing to deliver again');
  } finally {
    await s.stop('SIGKILL');
    await hook.close();
    dir.remove();
  }
});
