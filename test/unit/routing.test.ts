import { test } from 'node:test';
import assert from 'node:assert/strict';
import { configSchema, type Config } from '../../src/config/schema.js';
import '../../src/delivery/adapters/index.js';
import { reachedAdapters, routeOf } from '../../src/delivery/routing.js';
import { labelsOf } from '../../src/inputs/labels.js';
import { seededRandom, testSeed } from '../helpers/seed.js';

const SEED = testSeed('unit/routing');
const NAMES = ['a', 'b', 'c', 'd'];

const adapters = ['a', 'b', 'c', 'd'].map((n) => ({ name: n, type: 'webhook' as const, url: `http://127.0.0.1:9/${n}` }));

/** A random tree over a few labels (some routes read each incident's element), with `continue` here and there. */
function randomTree(r: () => number, depth = 0): Record<string, unknown> {
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(r() * xs.length)]!;
  const matcher = () =>
    pick([
      `team="${pick(['net', 'core', 'edge'])}"`,
      `severity=~"${pick(['CRITICAL', 'MAJOR|MINOR', '.*'])}"`,
      `tenant!="${pick(['acme', 'default'])}"`,
      `element_id="${pick(['olt-1', 'olt-2'])}"`,
    ]);
  const children = depth < 2 ? Math.floor(r() * 4) : 0;
  return {
    receiver: pick(NAMES),
    ...(depth > 0 ? { matchers: [matcher()], continue: r() < 0.3 } : {}),
    ...(children ? { routes: Array.from({ length: children }, () => randomTree(r, depth + 1)) } : {}),
  };
}

const entry = (r: () => number) => {
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(r() * xs.length)]!;
  return {
    kind: 'incident' as const,
    key: `dedup:${Math.floor(r() * 1e6)}`,
    severity: pick(['CRITICAL', 'MAJOR', 'MINOR']),
    data: { element_id: pick(['olt-1', 'olt-2', 'olt-3']), labels: { team: pick(['net', 'core', 'edge']) } },
  };
};

test(`a remembered route is the tree's own answer, for every label set and tenant (seed ${SEED})`, () => {
  const r = seededRandom(SEED);
  for (let t = 0; t < 40; t++) {
    const config: Config = configSchema.parse({ adapters, route: randomTree(r) });
    // Many arrivals per tree, so most answers come from what the tree remembers.
    for (let i = 0; i < 200; i++) {
      const e = entry(r);
      const tenant = r() < 0.5 ? 'acme' : 'default';
      const walked = [...new Set(reachedAdapters(config, { ...labelsOf(e), tenant }))];
      assert.deepEqual(routeOf(config, tenant, e), walked, `tree ${t}, arrival ${i}: ${JSON.stringify(config.route)} ${JSON.stringify(e)} ${tenant}`);
    }
  }
});

test('a producer label named tenant routes nothing: the caller’s tenant is the one a route reads', () => {
  const config = configSchema.parse({ adapters, route: { receiver: 'a', routes: [{ receiver: 'b', matchers: ['tenant="acme"'] }] } });
  const posing = { kind: 'incident' as const, key: 'dedup:1', severity: 'MAJOR', data: { labels: { tenant: 'acme' } } };
  assert.deepEqual(routeOf(config, 'default', posing), ['a']);
  assert.deepEqual(routeOf(config, 'acme', posing), ['b']);
});

test('without a tree there is no route (every adapter takes the entry)', () => {
  assert.equal(routeOf(configSchema.parse({ adapters }), 'default', entry(seededRandom(1))), undefined);
});
