import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { schemaVersions } from '../../src/store/schema-versions.js';
import { postJson, REPO_ROOT, spawnServer } from '../helpers/process.js';
import { tempDir } from '../helpers/tmp.js';

const run = promisify(execFile);
const VERSION = (JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string }).version;

// The README's production install, literally: a package made by `npm pack` in a built clone,
// installed globally without dev dependencies into a fresh prefix, serves from its own `onceonly`.
test('npm pack, then npm install -g --omit=dev of the package: onceonly serve from it decides', async () => {
  const dir = tempDir();
  try {
    // dist/ is built (npm test builds it first): packed as it is, without rebuilding it under the other tests' feet.
    await run('npm', ['pack', '--ignore-scripts', '--pack-destination', dir.path], { cwd: REPO_ROOT, timeout: 120_000 });
    const tgz = join(dir.path, `onceonly-${VERSION}.tgz`);
    assert.ok(existsSync(tgz), `npm pack made ${tgz}`);
    const prefix = join(dir.path, 'prefix');
    // Its dependencies come from the registry (or npm's cache); better-sqlite3 builds its native part here.
    await run('npm', ['install', '-g', '--omit=dev', '--prefer-offline', '--no-audit', '--no-fund', '--prefix', prefix, tgz], {
      cwd: dir.path,
      timeout: 600_000,
    });
    const installed = join(prefix, 'lib', 'node_modules', 'onceonly');
    for (const dev of ['typescript', 'tsx', '@biomejs/biome']) assert.ok(!existsSync(join(installed, 'node_modules', dev)), `no dev dependency: ${dev}`);
    const bin = join(prefix, 'bin', 'onceonly');
    // The release, the commit the package was built from (a clone's HEAD) and the schemas it migrates to.
    const { sqlite, postgres } = schemaVersions();
    assert.match(
      (await run(bin, ['--version'])).stdout.trim(),
      new RegExp(`^${VERSION.replace(/\./g, '\\.')} \\(commit [0-9a-f]{12}; schema: sqlite ${sqlite}, postgres ${postgres}\\)$`),
    );

    const s = await spawnServer(['--port', '0', '--store', `sqlite:${join(dir.path, 'o.db')}`], {}, bin);
    try {
      const fault = { element_id: 'olt-7', fault_class: 'LOS', root_cause_id: 'fiber-cut-12', severity: 'MAJOR' };
      assert.equal((await postJson(`${s.url}/v1/incidents`, fault)).body.decision, 'CREATE');
      assert.equal((await postJson(`${s.url}/v1/incidents`, fault)).body.decision, 'SUPPRESS');
      assert.equal((await fetch(`${s.url}/readyz`)).status, 200);
      assert.equal(await s.stop('SIGTERM'), 0);
    } finally {
      await s.stop('SIGKILL');
    }
  } finally {
    dir.remove();
  }
});

test('a clone installed without dev dependencies is told how to install, and the install does not fail', async () => {
  // `prepare` as npm runs it in such a clone: the script beside a package.json, no node_modules.
  const dir = tempDir();
  try {
    mkdirSync(join(dir.path, 'scripts'));
    copyFileSync(join(REPO_ROOT, 'scripts', 'prepare.mjs'), join(dir.path, 'scripts', 'prepare.mjs'));
    writeFileSync(join(dir.path, 'package.json'), '{"name":"x","type":"module"}\n');
    const r = await run(process.execPath, [join(dir.path, 'scripts', 'prepare.mjs')], { cwd: dir.path });
    assert.match(r.stderr, /dev dependencies are not installed.*\n.*\n {2}npm ci && npm pack && npm install -g --omit=dev \.\/onceonly-<version>\.tgz/);
    assert.ok(!existsSync(join(dir.path, 'dist')), 'nothing was built');
  } finally {
    dir.remove();
  }
});
