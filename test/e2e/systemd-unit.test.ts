// needs: systemd
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CLI, REPO_ROOT } from '../helpers/process.js';
import { tempDir } from '../helpers/tmp.js';

const UNIT = readFileSync(join(REPO_ROOT, 'deploy', 'onceonly.service'), 'utf8');

/** `systemd-analyze verify` on a unit file: its complaints (it exits 0 on a value it ignores, so they are what counts). */
function verify(text: string): string {
  const dir = tempDir();
  try {
    const file = join(dir.path, 'onceonly.service');
    // The unit names the installed binary; here it runs the built CLI with this Node, every other line as shipped.
    writeFileSync(file, text.replace('/usr/local/bin/onceonly serve', `${process.execPath} ${CLI} serve`));
    const r = spawnSync('systemd-analyze', ['verify', file], { encoding: 'utf8' });
    return `${r.status === 0 ? '' : `exit ${r.status}\n`}${r.stdout}${r.stderr}`.trim();
  } finally {
    dir.remove();
  }
}

test('the shipped systemd unit passes systemd-analyze verify without a complaint', () => {
  assert.ok(UNIT.includes('ExecStart=/usr/local/bin/onceonly serve'), 'it starts the installed onceonly');
  assert.equal(verify(UNIT), '');
  // The check can fail: a value systemd cannot parse is reported.
  assert.match(verify(UNIT.replace('KillSignal=SIGTERM', 'KillSignal=SIGNOPE')), /Failed to parse signal name/);
});

test('the unit drains on SIGTERM within its stop timeout, reloads with SIGHUP, and keeps its state in one directory', () => {
  const line = (key: string) => [...UNIT.matchAll(new RegExp(`^${key}=(.*)$`, 'gm'))].map((m) => m[1]);
  assert.deepEqual(line('KillSignal'), ['SIGTERM']);
  assert.deepEqual(line('ExecReload'), ['/bin/kill -HUP $MAINPID']);
  // A delivery in flight lasts at most its adapter's timeout (10 s by default): the stop timeout outlasts it.
  assert.ok(Number(line('TimeoutStopSec')[0]) >= 30);
  assert.deepEqual(line('StateDirectory'), ['onceonly']);
  assert.deepEqual(line('WorkingDirectory'), ['/var/lib/onceonly']);
  assert.ok(line('Environment').includes('ONCEONLY_STORE=sqlite:/var/lib/onceonly/onceonly.db'));
});
