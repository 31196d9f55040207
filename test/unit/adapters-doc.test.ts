import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { parseConfig } from '../../src/config/load.js';
// Adapters register their config schemas when their module loads, as the server and the library entry do.
import '../../src/delivery/adapters/index.js';

// docs/adapters.md promises that its YAML examples are valid config: each
// block is parsed here, and every adapter type has an example.
const doc = readFileSync(new URL('../../docs/adapters.md', import.meta.url), 'utf8');
const blocks = [...doc.matchAll(/```yaml\n([\s\S]*?)```/g)].map((m) => m[1]!);

test('every YAML example in docs/adapters.md is valid config', () => {
  assert.ok(blocks.length >= 7);
  const types = new Set<string>();
  for (const yaml of blocks) {
    // A secret reference (`${env:…}`, `${file:…}`) stands for a value the reader provides: a placeholder here.
    const cfg = parseConfig(
      yaml.replace(/\$\{(?:env|file):([^}]*)\}/g, (_, name: string) => `placeholder-for-${name.replace(/[^A-Za-z0-9]/g, '-')}`),
      'docs/adapters.md',
    );
    for (const a of cfg.adapters) types.add(a.type);
  }
  assert.deepEqual([...types].sort(), ['jira', 'mqtt', 'pagerduty', 'servicenow', 'slack', 'webhook']);
});
