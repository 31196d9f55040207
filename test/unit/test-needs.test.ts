import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { filesUnder } from '../helpers/files.js';

/**
 * `npm test -- <subset>` installs and starts only what the chosen files
 * declare in `// needs: …`: a file that uses a system part without declaring
 * it would pass in the whole suite (someone else's need started it) and fail
 * alone. Each helper or command below implies its need.
 */
const IMPLIES: Array<[RegExp, string]> = [
  [/helpers\/redis\.js/, 'redis'],
  [/helpers\/postgres\.js/, 'postgres'],
  [/helpers\/alertmanager\.js/, 'alertmanager'],
  [/helpers\/tls\.js/, 'openssl'],
  [/\/usr\/bin\/chromium|executablePath/, 'chromium'],
  [/'promtool'/, 'promtool'],
  [/mqtt\.connect|mqttAdapter\(/, 'mosquitto'],
];

const root = new URL('../', import.meta.url).pathname;

/**
 * A test file's own text and that of every file under test/ it imports,
 * followed through helpers that import other helpers (a chaos harness that
 * starts Redis implies Redis for every file that uses the harness).
 */
function textWithImports(file: string, seen = new Set<string>()): string {
  if (seen.has(file)) return '';
  seen.add(file);
  const text = readFileSync(file, 'utf8');
  const local = [...text.matchAll(/from '(\.{1,2}\/[^']+)\.js'/g)]
    .map((m) => resolve(dirname(file), `${m[1]}.ts`))
    .filter((p) => p.startsWith(root) && existsSync(p));
  // Each import also by its path from test/ (`./redis.js` inside helpers/ is helpers/redis.js), which is what IMPLIES matches.
  return [text, ...local.flatMap((p) => [`// imports ${p.slice(root.length).replace(/\.ts$/, '.js')}`, textWithImports(p, seen)])].join('\n');
}

const declaredNeeds = (text: string) => new Set([...text.matchAll(/^\/\/ needs: (.+)$/gm)].flatMap((m) => m[1]!.trim().split(/\s+/)));

test('every test file declares in `// needs:` the system parts its helpers use, through the helpers they import', () => {
  const missing: string[] = [];
  for (const file of filesUnder(root, '.test.ts').filter((f) => !f.endsWith('test-needs.test.ts'))) {
    const declared = declaredNeeds(readFileSync(file, 'utf8'));
    const text = textWithImports(file);
    for (const [uses, need] of IMPLIES) if (uses.test(text) && !declared.has(need)) missing.push(`${file.slice(root.length)}: ${need}`);
  }
  assert.deepEqual(missing, []);
});

test('the guard sees a need that comes through a helper', () => {
  // muting.test.ts names no Redis helper itself: it gets Redis and Postgres through helpers/backends.ts.
  const own = readFileSync(join(root, 'integration/muting.test.ts'), 'utf8');
  assert.doesNotMatch(own, /helpers\/(redis|postgres)\.js/);
  const viaHelper = textWithImports(join(root, 'integration/muting.test.ts'));
  assert.match(viaHelper, /helpers\/redis\.js/);
  assert.match(viaHelper, /helpers\/postgres\.js/);
});

test('`npm test -- unit` needs nothing but npm: no unit test declares a system part', () => {
  const needing = filesUnder(join(root, 'unit'), '.test.ts')
    .map((f) => [f.slice(root.length), [...declaredNeeds(readFileSync(f, 'utf8'))]] as const)
    .filter(([, needs]) => needs.length > 0);
  assert.deepEqual(needing, []);
});
