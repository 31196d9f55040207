import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { tempDir } from '../helpers/tmp.js';
import { REPO_ROOT } from '../helpers/process.js';

// The README's library example is run exactly as written, importing the
// package by name from a directory outside the repository, as a user would.
test('the README library example runs and prints CREATE, SUPPRESS, UPDATE, CREATE', () => {
  const readme = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');
  const m = /<!-- example:library -->\s*```js\n([\s\S]*?)```/.exec(readme);
  assert.ok(m, 'README has a ```js block after <!-- example:library -->');
  const code = m[1]!;
  assert.ok(code.split('\n').filter((l) => l.trim()).length <= 12, 'the example stays about ten lines');

  const dir = tempDir();
  try {
    mkdirSync(join(dir.path, 'node_modules'));
    symlinkSync(REPO_ROOT, join(dir.path, 'node_modules', 'onceonly'), 'dir');
    writeFileSync(join(dir.path, 'example.mjs'), code);
    const r = spawnSync(process.execPath, ['example.mjs'], { cwd: dir.path, encoding: 'utf8', timeout: 20_000 });
    assert.equal(r.status, 0, r.stderr);
    const decisions = [...r.stdout.matchAll(/(CREATE|SUPPRESS|UPDATE)/g)].map((x) => x[1]);
    assert.deepEqual(decisions, ['CREATE', 'SUPPRESS', 'UPDATE', 'CREATE']);
  } finally {
    dir.remove();
  }
});
