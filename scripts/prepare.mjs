#!/usr/bin/env node
// npm runs `prepare` after `npm ci` / `npm install` in a clone and before
// `npm pack`: it builds dist/. A clone installed without its dev
// dependencies (`npm ci --omit=dev`) has no compiler to build with; failing
// the install there helps nobody, so it says what to do instead and succeeds.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

if (!existsSync(new URL('../node_modules/typescript/package.json', import.meta.url))) {
  process.stderr.write(
    'onceonly: the dev dependencies are not installed, so dist/ is not built here.\n' +
      'For a production install without them, build a package in a full clone and install that:\n' +
      '  npm ci && npm pack && npm install -g --omit=dev ./onceonly-<version>.tgz\n',
  );
  process.exit(0);
}
const r = spawnSync('npm', ['run', 'build'], { stdio: 'inherit' });
process.exit(r.status ?? 1);
