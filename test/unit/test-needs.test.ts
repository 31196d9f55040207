import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

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
const walk = (dir: string): string[] =>
  readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? walk(p) : p.endsWith('.test.ts') ? [p] : [];
  });

test('every test file declares in `// needs:` the system parts its helpers use', () => {
  const missing: string[] = [];
  for (const file of walk(root).filter((f) => !f.endsWith('test-needs.test.ts'))) {
    const text = readFileSync(file, 'utf8');
    const declared = new Set([...text.matchAll(/^\/\/ needs: (.+)$/gm)].flatMap((m) => m[1]!.trim().split(/\s+/)));
    for (const [uses, need] of IMPLIES) if (uses.test(text) && !declared.has(need)) missing.push(`${file.slice(root.length)}: ${need}`);
  }
  assert.deepEqual(missing, []);
});
