import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, readFileSync, statSync } from 'node:fs';
import { runtimeSupportLine } from '../../src/cli/runtime-support.js';

const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { engines: { node: string } };

test('Node 20 and older get one line saying they are out of support; 22 and 24 get none', () => {
  for (const v of ['v20.20.2', 'v18.20.0', '20.12.0']) {
    const line = runtimeSupportLine(v);
    assert.ok(line, v);
    assert.equal(line.split('\n').length, 2, 'one line, ended');
    assert.match(line, /out of support/);
    assert.match(line, /Node\.js 24/);
  }
  for (const v of ['v22.23.5', 'v24.22.3', 'v26.0.0']) assert.equal(runtimeSupportLine(v), null, v);
});

test('engines asks for the supported lines: 22 and newer', () => {
  assert.equal(pkg.engines.node, '>=22');
});

// The package's bin is run directly (npx onceonly, a global install): the build gives it the run bit back.
test('a rebuild keeps the run bit on dist/cli/main.js', () => {
  const main = new URL('../../dist/cli/main.js', import.meta.url);
  if (!existsSync(main)) return assert.fail('dist/ is built before the tests (npm test builds it)');
  chmodSync(main, 0o644);
  const r = spawnSync(process.execPath, [new URL('../../scripts/copy-assets.mjs', import.meta.url).pathname], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  assert.equal(statSync(main).mode & 0o111, 0o111);
  const run = spawnSync(main.pathname, ['--version'], {
    encoding: 'utf8',
    env: { ...process.env, PATH: `${process.execPath.replace(/\/node$/, '')}:${process.env.PATH}` },
  });
  assert.equal(run.status, 0, run.stderr);
  assert.match(run.stdout, /^\d+\.\d+\.\d+/);
});
