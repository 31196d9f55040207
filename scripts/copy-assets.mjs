#!/usr/bin/env node
// tsc compiles TypeScript only; the files the code reads at run time beside
// itself (Lua scripts) are copied into dist/ here, as part of `npm run build`.
import { execFileSync } from 'node:child_process';
import { chmodSync, cpSync, writeFileSync } from 'node:fs';

const assets = ['store/redis/lua', 'store/postgres/migrations', 'store/sqlite/migrations', 'http/dashboard/public'];
for (const dir of assets) cpSync(new URL(`../src/${dir}`, import.meta.url), new URL(`../dist/${dir}`, import.meta.url), { recursive: true });
// tsc writes files without the run bit; the package's `bin` is run directly (npx onceonly, a global
// install), so it gets the bit back on every build.
chmodSync(new URL('../dist/cli/main.js', import.meta.url), 0o755);
// The commit the build is made from, for `onceonly --version` and onceonly_build_info; "unknown" where git
// cannot say (a source archive, a build without git).
let commit = 'unknown';
try {
  commit =
    execFileSync('git', ['rev-parse', '--short=12', 'HEAD'], {
      cwd: new URL('..', import.meta.url),
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim() || 'unknown';
} catch {}
writeFileSync(new URL('../dist/build-info.json', import.meta.url), `${JSON.stringify({ commit })}\n`);
