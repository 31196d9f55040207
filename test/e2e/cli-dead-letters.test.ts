import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startSink } from '../fakes/http-fake.js';
import { postJson, runCli, spawnServer } from '../helpers/process.js';
import { tempDir } from '../helpers/tmp.js';
import { until } from '../helpers/wait.js';

// The operator's view of a key held by a dead letter: `dead-letters list` says what waits behind it and
// how to let it go; `dead-letters drop` lets it go without sending the refused create again.
test('dead-letters list says what waits behind a dead letter; drop lets the close go and the create is never sent again', async () => {
  const hook = await startSink(200, {});
  hook.faults = (q) => (q.body?.action === 'create' ? { status: 400, body: { error: 'unknown field' } } : 'ok');
  const dir = tempDir();
  const config = join(dir.path, 'c.yaml');
  writeFileSync(config, `adapters: [ { name: hook, type: webhook, url: "${hook.url}/t" } ]\n`);
  const s = await spawnServer(['--port', '0', '--store', `sqlite:${join(dir.path, 'o.db')}`, '--config', config]);
  try {
    const { body } = await postJson(`${s.url}/v1/incidents`, { element_id: 'olt-5', fault_class: 'LOS', root_cause_id: 'cut', severity: 'MAJOR' });
    const key = body.dedup_key as string;
    await until(
      () => hook.requests.length > 0 || null,
      10_000,
      () => 'the create was never tried',
    );
    assert.equal((await fetch(`${s.url}/v1/incidents/${key}`, { method: 'DELETE' })).status, 204);
    const listed = await until(
      () => {
        const l = runCli(['dead-letters', 'list', '--url', s.url]);
        return /holds 1 later delivery of this key to hook: retry or drop it to let them go/.test(l.stdout) ? l : null;
      },
      10_000,
      () => runCli(['dead-letters', 'list', '--url', s.url]).stdout,
    );
    const id = /^(\S+)\s+hook\s+incident create/m.exec(listed.stdout)?.[1];
    assert.ok(id, listed.stdout);
    assert.deepEqual(
      hook.requests.map((q) => q.body.action),
      ['create'],
      'the close waits behind the refused create',
    );
    const dropped = runCli(['dead-letters', 'drop', id, '--url', s.url]);
    assert.deepEqual([dropped.status, dropped.stdout.trim()], [0, `dropped ${id}`], dropped.stderr);
    await until(
      () => hook.requests.some((q) => q.body.action === 'close') || null,
      10_000,
      () => 'the close never went',
    );
    assert.deepEqual(
      hook.requests.map((q) => q.body.action),
      ['create', 'close'],
    );
    const again = runCli(['dead-letters', 'drop', id, '--url', s.url]);
    assert.equal(again.status, 1);
    assert.match(again.stderr, /HTTP 404: no dead letter/);
    const bad = runCli(['dead-letters', 'drop', '--url', s.url]);
    assert.equal(bad.status, 2, 'no id: a usage error');
    assert.deepEqual([runCli(['dead-letters', 'list', '--url', s.url]).stdout.trim()], ['no dead letters']);
  } finally {
    await s.stop();
    await hook.close();
    dir.remove();
  }
});
