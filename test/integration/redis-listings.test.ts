// needs: redis
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { redisConnection } from '../../src/store/redis/connection.js';
import { RedisStore } from '../../src/store/redis/redis-store.js';
import { startRedis, type RedisServer } from '../helpers/redis.js';

/**
 * Redis lists a tenant's incidents and devices by SCAN, and a glob's `*`
 * spans any text, a key's own included: another tenant's key that holds
 * `}:i:acme:` (a PagerDuty dedup_key is the producer's text) matches acme's
 * pattern. Such keys must neither show up in acme's listing nor crowd acme's
 * own incidents out of it.
 */
let redis: RedisServer;
let store: RedisStore;
before(async () => {
  redis = await startRedis();
  store = new RedisStore(redisConnection(redis.url));
  await store.init();
});
after(async () => {
  await store?.close();
  await redis?.stop();
});

const claim = (tenant: string, key: string) => ({ tenant, key, fingerprint: 'MAJOR|0', ttlMs: 600_000 });

test("another tenant's keys that spell this tenant's pattern neither show nor crowd out this tenant's incidents", async () => {
  for (let i = 0; i < 50; i++) await store.incidents.decide(claim('acme', `dedup:${i.toString(16).padStart(32, '0')}`));
  for (let i = 0; i < 600; i++) await store.incidents.decide(claim('beta', `pd:}:i:acme:junk-${i}`));
  const listed = await store.queries.listIncidents('acme', 100);
  assert.equal(listed.length, 50, `acme sees its own 50 (saw ${listed.length})`);
  assert.ok(listed.every((r) => r.tenant === 'acme' && r.key.startsWith('dedup:')));
  const theirs = await store.queries.listIncidents('beta', 1000);
  assert.equal(theirs.length, 600);
  assert.ok(theirs.every((r) => r.tenant === 'beta'));
});

test("a device of another tenant whose id spells this tenant's pattern is not listed as this tenant's", async () => {
  const event = (tenant: string, device: string) => ({ tenant, device, boot: 'b1', sequence: 1, state: 'up', observedAt: Date.now() });
  await store.devices.apply(event('acme', 'dev-1'), 600_000);
  // beta's device key is {oo:N}:d:4.beta<len>.}:d:4.acme9.dev-stolen: acme's glob {oo:*}:d:4.acme* matches it.
  await store.devices.apply(event('beta', '}:d:4.acme9.dev-stolen'), 600_000);
  const acme = await store.queries.listDevices('acme', 100);
  assert.deepEqual(
    acme.map((d) => [d.tenant, d.device]),
    [['acme', 'dev-1']],
  );
  const all = await store.queries.listDevices(null, 100);
  assert.deepEqual(all.map((d) => `${d.tenant}/${d.device}`).sort(), ['acme/dev-1', 'beta/}:d:4.acme9.dev-stolen']);
});
