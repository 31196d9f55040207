import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { breach, circles, importsOf } from '../helpers/layers.js';

const SRC = fileURLToPath(new URL('../../src', import.meta.url));

// Planted fault it catches: an import that runs back up the layers (core importing config's types).
test('every import in src/ keeps the layer order, type-only imports included', () => {
  const imports = importsOf(SRC);
  assert.ok(imports.length > 500, `the walk found the imports (${imports.length})`);
  const breaches = imports.map(breach).filter((b) => b !== null);
  assert.deepEqual(breaches, [], 'imports against the layer order (docs/architecture.md, "Layers")');
});

test('the check refuses each kind of breach it names', () => {
  const cases: Array<[string, string, RegExp | null]> = [
    ['core/identity.ts', 'config/schema.ts', /a layer above or beside it/],
    ['store/contract/silences.ts', 'mute/mutes.ts', /a layer above or beside it/],
    ['cli/main.ts', 'index.ts', /a layer above or beside it/],
    ['store/postgres/pg-deliveries.ts', 'store/sqlite/sqlite-deliveries.ts', /one store backend uses another's/],
    ['store/contract/index.ts', 'store/redis/keys.ts', /the contract knows no backend/],
    ['store/redis/redis-store.ts', 'store/sql/deliveries.ts', /only the SQL backends use sql/],
    ['widgets/x.ts', 'core/clock.ts', /has no place in the layer order/],
    ['store/redis/redis-tickets.ts', 'store/redis/adopter.ts', /through the layout seam only/],
    ['store/redis/redis-incidents.ts', 'store/redis/reshard.ts', /through the layout seam only/],
    ['store/redis/layout-seam.ts', 'store/redis/adopter.ts', null],
    ['store/redis/redis-store.ts', 'store/redis/layout-seam.ts', null],
    ['http/server.ts', 'engine/deduplicator.ts', null],
    ['store/postgres/pg-requests.ts', 'store/sql/requests.ts', null],
    ['store/failopen/journal.ts', 'store/sqlite/sqlite-store.ts', null],
  ];
  for (const [from, to, want] of cases) {
    const got = breach({ from, to });
    if (want === null) assert.equal(got, null, `${from} → ${to} keeps the layers`);
    else assert.match(got ?? '', want, `${from} → ${to}`);
  }
});

// Planted fault it catches: a stage that takes the observer's type from the worker that imports the stage.
test('no import circle in src/, type-only imports and the dashboard scripts included', () => {
  const imports = importsOf(SRC);
  assert.ok(
    imports.some((i) => i.from.endsWith('.js') && i.to.endsWith('.js')),
    'the dashboard scripts are read',
  );
  assert.deepEqual(circles(imports), [], 'files that import one another, through any chain');
});

test('the circle check finds a circle of two, of three, and a file importing itself, and nothing in a chain', () => {
  const chain = [
    { from: 'a.ts', to: 'b.ts' },
    { from: 'b.ts', to: 'c.ts' },
  ];
  assert.deepEqual(circles(chain), []);
  assert.deepEqual(circles([...chain, { from: 'c.ts', to: 'a.ts' }]), [['a.ts', 'b.ts', 'c.ts']]);
  assert.deepEqual(circles([...chain, { from: 'b.ts', to: 'a.ts' }, { from: 'd.ts', to: 'd.ts' }]).sort(), [['a.ts', 'b.ts'], ['d.ts']]);
});

// Planted fault it catches: the HTTP layer building a drop-in's decider for itself (it did, and app/ built a second one for the brokers).
test('only app/ and simulate/ build the engine’s parts: a route, an ingest or a store is handed them', () => {
  const files = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? files(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : []));
  const owners = ['engine', 'heartbeats', 'groups', 'history'];
  const parts = new Map<string, string>();
  for (const owner of owners)
    for (const f of files(join(SRC, owner))) for (const m of readFileSync(f, 'utf8').matchAll(/^export class (\w+)/gm)) parts.set(m[1]!, owner);
  assert.ok(parts.has('Deduplicator') && parts.has('OpsgenieIngest') && parts.size >= 8, `the parts were found (${[...parts.keys()].join(', ')})`);
  const built: string[] = [];
  for (const f of files(SRC)) {
    const folder = relative(SRC, f).split(sep)[0]!;
    if (folder === 'app' || folder === 'simulate') continue;
    for (const m of readFileSync(f, 'utf8').matchAll(/\bnew (\w+)\(/g)) {
      const owner = parts.get(m[1]!);
      // A part's own folder may build its helpers (the deduplicator its race watch, the library's entry point a deduplicator).
      if (owner !== undefined && owner !== folder) built.push(`${relative(SRC, f)} builds ${m[1]}`);
    }
  }
  assert.deepEqual(built, []);
});
