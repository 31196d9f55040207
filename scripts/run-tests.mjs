#!/usr/bin/env node
// Runs every test file under test/ with node's own test runner, TypeScript
// loaded by tsx. Node 20's --test does not expand globs or find .ts files, so
// the list is made here. `npm test -- PATTERN` runs only files whose path
// contains PATTERN. What the chosen files need beyond npm is installed or
// started first (scripts/test-prereqs.mjs).
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { ensure } from './test-prereqs.mjs';

const root = new URL('..', import.meta.url).pathname;
const filters = process.argv.slice(2);

function walk(dir) {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? walk(p) : p.endsWith('.test.ts') ? [p] : [];
  });
}

const files = walk(join(root, 'test'))
  .map((p) => relative(root, p))
  .filter((p) => filters.length === 0 || filters.some((f) => p.includes(f)))
  .sort();
if (files.length === 0) {
  console.error(`no test files match ${filters.join(' ')}`);
  process.exit(1);
}
// What the chosen files need beyond npm (their `// needs: …` lines), installed or started first.
const needs = new Set(files.flatMap((f) => [...readFileSync(join(root, f), 'utf8').matchAll(/^\/\/ needs: (.+)$/gm)].flatMap((m) => m[1].trim().split(/\s+/))));
ensure([...needs]);

/**
 * Two passes: everything but the chaos suite two files at a time, then the
 * chaos suite one file at a time. Each chaos test loads the machine on
 * purpose (replicas, clients, a fake ITSM on two cores) and measures what
 * comes out; two side by side starve each other into failures that say
 * nothing about the product.
 */
const chaos = (f) => f.startsWith('test/chaos/') && f !== 'test/chaos/history.test.ts';
const run = (list, concurrency, timeoutMs) =>
  list.length === 0
    ? 0
    : (spawnSync(
        process.execPath,
        ['--import', 'tsx', '--test', '--test-reporter=spec', `--test-concurrency=${concurrency}`, `--test-timeout=${timeoutMs}`, ...list],
        { cwd: root, stdio: 'inherit' },
      ).status ?? 1);
// A test that hangs fails after 5 minutes instead of holding CI to its limit.
const first = run(
  files.filter((f) => !chaos(f)),
  2,
  300_000,
);
// A chaos test waits for delivery while it makes progress and fails on a stall
// of its own (test/chaos/harness.ts); on a machine with a core taken by
// something else it can take longer than 5 minutes without anything wrong.
const second = run(files.filter(chaos), 1, 1_200_000);
process.exit(first || second);
