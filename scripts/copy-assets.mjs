#!/usr/bin/env node
// tsc compiles TypeScript only; the files the code reads at run time beside
// itself (Lua scripts) are copied into dist/ here, as part of `npm run build`.
import { chmodSync, cpSync } from 'node:fs';

const assets = ['store/redis/lua', 'store/postgres/migrations', 'store/sqlite/migrations', 'http/dashboard/public'];
for (const dir of assets) cpSync(new URL(`../src/${dir}`, import.meta.url), new URL(`../dist/${dir}`, import.meta.url), { recursive: true });
// tsc writes files without the run bit; the package's `bin` is run directly (npx onceonly, a global
// install), so it gets the bit back on every build.
chmodSync(new URL('../dist/cli/main.js', import.meta.url), 0o755);
