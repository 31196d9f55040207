// needs: redis
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { redisConnection } from '../../src/store/redis/connection.js';
import { RedisStore } from '../../src/store/redis/redis-store.js';
import { startRedis, type RedisServer } from '../helpers/redis.js';

/**
 * Redis lists a tenant's incidents and devices from the tenant's own indexes,
 * never by SCAN, whose glob cannot say "this tenant's keys" exactly (a `*`
 * spans any text, and a PagerDuty dedup_key or a device id is the producer's
 * text): another tenant's keys that spell this tenant's pattern neither show
 * up in its listing nor crowd its own incidents out of it.
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

const scans = () => Number(/cmdstat_scan:calls=(\d+)/.exec(redis.cli('INFO', 'commandstats'))?.[1] ?? 0);
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
  const before = scans();
  const all = await store.queries.listDevices(null, 100);
  assert.deepEqual(all.map((d) => `${d.tenant}/${d.device}`).sort(), ['acme/dev-1', 'beta/}:d:4.acme9.dev-stolen']);
  assert.deepEqual(
    (await store.queries.listDevices('beta', 100)).map((d) => [d.tenant, d.device, d.state]),
    [['beta', '}:d:4.acme9.dev-stolen', 'up']],
  );
  assert.equal(scans(), before, 'device listings sent no SCAN');
});

test("a tenant's listing reads its own index: no SCAN; closed and expired keys leave it, and the sweep trims what expired", async () => {
  // Expired records are kept for the grace (to report CREATE/expired); a short one here, so they go within the test.
  const s = new RedisStore(redisConnection(redis.url), 'redis', { expiredGraceMs: 50 });
  const indexed = () => s.layout.allShards('ti').flatMap((k) => redis.cli('ZRANGE', `${k}:5.gamma`, '0', '-1').split('\n').filter(Boolean));
  try {
    await s.init();
    for (let i = 0; i < 5; i++) await s.incidents.decide(claim('gamma', `dedup:g${i}`));
    await s.incidents.decide({ ...claim('gamma', 'dedup:short'), ttlMs: 200 });
    const before = scans();
    const listed = await s.queries.listIncidents('gamma', 100);
    assert.equal(scans(), before, 'the listing sent no SCAN');
    assert.deepEqual(listed.map((r) => r.key).sort(), ['dedup:g0', 'dedup:g1', 'dedup:g2', 'dedup:g3', 'dedup:g4', 'dedup:short']);
    // Most recently seen first.
    await new Promise((r) => setTimeout(r, 5));
    await s.incidents.decide(claim('gamma', 'dedup:g2'));
    assert.equal((await s.queries.listIncidents('gamma', 1))[0]!.key, 'dedup:g2');
    assert.ok(await s.incidents.close('gamma', 'dedup:g3'));
    assert.ok(!indexed().includes('dedup:g3'), 'a close takes its key out of the index');
    await new Promise((r) => setTimeout(r, 400));
    assert.deepEqual((await s.queries.listIncidents('gamma', 100)).map((r) => r.key).sort(), ['dedup:g0', 'dedup:g1', 'dedup:g2', 'dedup:g4']);
    assert.deepEqual(indexed().sort(), ['dedup:g0', 'dedup:g1', 'dedup:g2', 'dedup:g4'], 'the listing dropped the expired key it met');
    // A key that expires with no listing after it is trimmed by the sweep.
    await s.incidents.decide({ ...claim('gamma', 'dedup:gone'), ttlMs: 100 });
    await new Promise((r) => setTimeout(r, 400));
    assert.ok((await s.sweepExpired()) >= 1, 'the sweep trimmed the expired key');
    assert.ok(!indexed().includes('dedup:gone'));
    assert.ok(indexed().includes('dedup:g0'), 'and left the live ones');
  } finally {
    await s.close();
  }
});
