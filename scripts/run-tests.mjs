#!/usr/bin/env node
// Runs every test file under test/ with node's own test runner, TypeScript
// loaded by tsx. Node 20's --test does not expand globs or find .ts files, so
// the list is made here. `npm test -- PATTERN` runs only files whose path
// contains PATTERN. What the chosen files need beyond npm is installed or
// started first (scripts/test-prereqs.mjs).
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { ensure } from './test-prereqs.mjs';

const root = new URL('..', import.meta.url).pathname;
const filters = process.argv.slice(2);

/** Every file under `dir`, at any depth. */
function walk(dir) {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? walk(p) : [p];
  });
}

const files = walk(join(root, 'test'))
  .filter((p) => p.endsWith('.test.ts'))
  .map((p) => relative(root, p))
  .filter((p) => filters.length === 0 || filters.some((f) => p.includes(f)))
  .sort();
if (files.length === 0) {
  console.error(`no test files match ${filters.join(' ')}`);
  process.exit(1);
}
// Tests that spawn the CLI (e2e, chaos, migrate-shards) run dist/. `npm test` builds it first (pretest);
// run directly, with a pattern, a dist/ older than any file of src/ is rebuilt here, so no test runs stale code.
if (process.env.npm_lifecycle_event !== 'test') {
  const entry = join(root, 'dist/cli/main.js');
  const built = existsSync(entry) ? statSync(entry).mtimeMs : 0;
  if (walk(join(root, 'src')).some((p) => statSync(p).mtimeMs > built)) {
    console.error('dist/ is older than src/: building it first (npm run build)');
    const b = spawnSync('npm', ['run', 'build'], { cwd: root, stdio: 'inherit' });
    if (b.status !== 0) process.exit(b.status ?? 1);
  }
}

// One seed for the whole run: every test that draws at random derives its own from it (test/helpers/seed.ts),
// so a failure is replayed with the same TEST_SEED.
if (!process.env.TEST_SEED) process.env.TEST_SEED = String(Date.now() % 2 ** 31);
// The tests' Redis servers keep nothing on disk on purpose (a restart empties them, which is what the
// fault tests restart them for): servers started by the tests run on them. The test of the check unsets it.
process.env.ONCEONLY_REDIS_ACCEPT_DATA_LOSS ??= '1';
console.log(`TEST_SEED=${process.env.TEST_SEED} (set it to replay this run's random draws)`);

// What the chosen files need beyond npm (their `// needs: …` lines), installed or started first.
const needs = new Set(files.flatMap((f) => [...readFileSync(join(root, f), 'utf8').matchAll(/^\/\/ needs: (.+)$/gm)].flatMap((m) => m[1].trim().split(/\s+/))));
ensure([...needs]);

/**
 * The minutes a file says it may take (`// timeout: N`), past the runner's
 * five: a file that builds a container image from packages on a machine
 * that has never built one.
 */
const minutesOf = (f) => Number(/^\/\/ timeout: (\d+)$/m.exec(readFileSync(join(root, f), 'utf8'))?.[1] ?? 0);

/**
 * Three passes: everything but the chaos suite and the long files two files
 * at a time, then the long files one at a time with the time they ask for,
 * then the chaos suite one file at a time. Each chaos test loads the machine
 * on purpose (replicas, clients, a fake ITSM on two cores) and measures what
 * comes out; two side by side starve each other into failures that say
 * nothing about the product.
 */
const chaos = (f) => f.startsWith('test/chaos/') && f !== 'test/chaos/history.test.ts';
const long = files.filter((f) => !chaos(f) && minutesOf(f) > 0);
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
  files.filter((f) => !chaos(f) && !long.includes(f)),
  2,
  300_000,
);
const longer = run(long, 1, Math.max(0, ...long.map(minutesOf)) * 60_000);
// A chaos test waits for delivery while it makes progress and fails on a stall
// of its own (test/chaos/harness.ts); on a machine with a core taken by
// something else it can take longer than 5 minutes without anything wrong.
const second = run(files.filter(chaos), 1, 1_200_000);
process.exit(first || longer || second);
