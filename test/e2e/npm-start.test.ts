import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { join } from 'node:path';
import { tempDir } from '../helpers/tmp.js';
import { REPO_ROOT, postJson } from '../helpers/process.js';

// The README's quick start, literally: `npm start -- FLAGS` serves the API.
test('npm start serves the incident lifecycle', async () => {
  const dir = tempDir();
  const child = spawn('npm', ['start', '--', '--port', '0', '--store', `sqlite:${join(dir.path, 'o.db')}`], {
    cwd: REPO_ROOT,
    stdio: ['ignore', 'pipe', 'inherit'],
    detached: true, // its own process group, so npm and the server stop together
  });
  try {
    const url = await new Promise<string>((resolve, reject) => {
      const t = setTimeout(() => reject(new Error('npm start did not listen within 20 s')), 20_000);
      createInterface({ input: child.stdout! }).on('line', (line) => {
        const m = /listening on (http:\/\/\S+?)"/.exec(line);
        if (m) {
          clearTimeout(t);
          resolve(m[1]!);
        }
      });
    });
    const fault = { element_id: 'olt-7', fault_class: 'LOS', root_cause_id: 'fiber-cut-12', severity: 'MAJOR' };
    const seen = [];
    seen.push((await postJson(`${url}/v1/incidents`, fault)).body.decision);
    seen.push((await postJson(`${url}/v1/incidents`, fault)).body.decision);
    const up = await postJson(`${url}/v1/incidents`, { ...fault, severity: 'CRITICAL' });
    seen.push(up.body.decision);
    seen.push((await postJson(`${url}/v1/incidents`, { ...fault, severity: 'CRITICAL', cleared: true })).body.decision);
    assert.equal((await fetch(`${url}/v1/incidents/${up.body.dedup_key}`, { method: 'DELETE' })).status, 204);
    seen.push((await postJson(`${url}/v1/incidents`, fault)).body.decision);
    assert.deepEqual(seen, ['CREATE', 'SUPPRESS', 'UPDATE', 'UPDATE', 'CREATE']);
  } finally {
    const exited = once(child, 'exit');
    process.kill(-child.pid!, 'SIGTERM');
    await exited;
    dir.remove();
  }
});
