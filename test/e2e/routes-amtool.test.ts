// needs: alertmanager
/**
 * The routing tree against the real thing: random trees (matchers `=`, `!=`,
 * `=~`, `!~`, `continue`, nesting, receivers inherited) and random label
 * sets, each answered by Debian's `amtool config routes test` and by
 * onceonly (the evaluator for every label set, the CLI for a sample). Every
 * answer must be identical. The seed is in the test's name.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { parseConfig } from '../../src/config/load.js';
import { dryRun } from '../../src/delivery/dry-run.js';
import { compileRoute } from '../../src/config/route.js';
import { routeReceivers } from '../../src/core/route.js';
import '../../src/delivery/adapters/index.js';
import { CLI, REPO_ROOT } from '../helpers/process.js';
import { seededRandom, testSeed } from '../helpers/seed.js';
import { tempDir } from '../helpers/tmp.js';

const run = promisify(execFile);
const SEED = testSeed('e2e/routes-amtool');
const TREES = 30;
const LABEL_SETS = 5;
/** Trees whose label sets also go through `onceonly routes test` (a process each). */
const CLI_TREES = 6;

const NAMES = ['team', 'severity', 'region', 'tenant', 'x'];
const VALUES = ['net', 'db', 'CRITICAL', 'MAJOR', 'eu', 'us', 'acme', '1', ''];
const PATTERNS = ['n.*', 'CRIT.*|MAJOR', 'eu|us', '.*', '', 'd.', '[a-z]+'];
const RECEIVERS = ['r0', 'r1', 'r2', 'r3'];

interface Node {
  receiver?: string;
  matchers?: string[];
  continue?: boolean;
  routes?: Node[];
}

function drawTree(r: () => number): Node {
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(r() * xs.length)]!;
  const matcher = () => {
    const op = pick(['=', '!=', '=~', '!~']);
    const value = op.includes('~') ? pick(PATTERNS) : pick(VALUES);
    return `${pick(NAMES)}${op}${JSON.stringify(value)}`;
  };
  const node = (depth: number): Node => {
    const n: Node = {};
    if (r() < 0.6) n.receiver = pick(RECEIVERS);
    const m = Math.floor(r() * 3);
    if (m > 0) n.matchers = Array.from({ length: m }, matcher);
    if (r() < 0.35) n.continue = true;
    const kids = depth < 3 ? Math.floor(r() * 4) : 0;
    if (kids > 0) n.routes = Array.from({ length: kids }, () => node(depth + 1));
    return n;
  };
  const kids = 1 + Math.floor(r() * 4);
  return { receiver: pick(RECEIVERS), routes: Array.from({ length: kids }, () => node(1)) };
}

function drawLabels(r: () => number): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of NAMES) if (r() < 0.7) out[name] = VALUES[Math.floor(r() * (VALUES.length - 1))]!;
  return out;
}

test(`onceonly routes exactly as amtool config routes test (seed ${SEED}, ${TREES} trees × ${LABEL_SETS} label sets)`, { timeout: 300_000 }, async () => {
  const r = seededRandom(SEED);
  const dir = tempDir();
  const disagreements: string[] = [];
  let compared = 0;
  let throughCli = 0;
  try {
    for (let t = 0; t < TREES; t++) {
      const tree = drawTree(r);
      const am = join(dir.path, `am-${t}.yml`);
      const oo = join(dir.path, `oo-${t}.yml`);
      writeFileSync(am, JSON.stringify({ route: tree, receivers: RECEIVERS.map((name) => ({ name })) }));
      const ooText = JSON.stringify({ adapters: RECEIVERS.map((name) => ({ name, type: 'webhook', url: 'http://127.0.0.1:9/hook' })), route: tree });
      writeFileSync(oo, ooText);
      const config = parseConfig(ooText, oo);
      const root = compileRoute(config.route!);
      for (let l = 0; l < LABEL_SETS; l++) {
        // amtool sees exactly the labels onceonly sees: the tenant label included.
        const labels = { tenant: 'default', ...drawLabels(r) };
        const args = Object.entries(labels).map(([k, v]) => `${k}=${JSON.stringify(v)}`);
        const want = (await run('amtool', ['config', 'routes', 'test', `--config.file=${am}`, ...args], { timeout: 30_000 })).stdout.trim();
        const got = routeReceivers(root, labels).join(',');
        compared++;
        if (got !== want) disagreements.push(`tree ${JSON.stringify(tree)} labels ${args.join(' ')}: amtool ${want}, onceonly ${got}`);
        // What POST /v1/routes/test answers for the running config (delivery/dry-run.ts).
        const dry = (await dryRun(config, labels.tenant, labels)).adapters.join(',');
        if (dry !== want) disagreements.push(`dry run, tree ${JSON.stringify(tree)} labels ${args.join(' ')}: amtool ${want}, POST /v1/routes/test ${dry}`);
        if (t < CLI_TREES && l < 2) {
          const tenant = labels.tenant;
          const rest = args.filter((a) => !a.startsWith('tenant='));
          const cli = (
            await run(process.execPath, [CLI, 'routes', 'test', `--config=${oo}`, `--tenant=${tenant}`, ...rest], { cwd: REPO_ROOT, timeout: 30_000 })
          ).stdout.trim();
          throughCli++;
          if (cli !== want) disagreements.push(`CLI, tree ${JSON.stringify(tree)} labels ${args.join(' ')}: amtool ${want}, onceonly routes test ${cli}`);
        }
      }
    }
  } finally {
    dir.remove();
  }
  assert.equal(compared, TREES * LABEL_SETS);
  assert.equal(throughCli, CLI_TREES * 2);
  assert.deepEqual(disagreements, [], `seed ${SEED}`);
});
