import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Histogram, Registry } from 'prom-client';
import { manualClock } from '../../src/core/clock.js';
import { instrumentStore, STORE_TIMING_SAMPLE } from '../../src/observe/instrumented-store.js';
import { MemoryStore } from '../../src/store/memory/memory-store.js';

const claim = (key: string) => ({ tenant: 't', key, fingerprint: 'major|false', ttlMs: 60_000 });

/** The timing wrapper on the memory store: every call answered as the store answers it, one in STORE_TIMING_SAMPLE of each operation timed. */
test('the store timing wrapper times one call in the sample of each operation, errors included, and changes no answer', async () => {
  const registry = new Registry();
  const latency = new Histogram({ name: 'lat', help: 'h', labelNames: ['operation', 'outcome'], buckets: [1], registers: [registry] });
  const raw = new MemoryStore(manualClock(1_000));
  const store = instrumentStore(raw, latency);
  const count = async (operation: string, outcome: string) =>
    (await registry.getSingleMetric('lat')!.get()).values.find(
      (v) => (v as { metricName?: string }).metricName === 'lat_count' && v.labels.operation === operation && v.labels.outcome === outcome,
    )?.value ?? 0;

  const calls = STORE_TIMING_SAMPLE * 2 + 1;
  const kinds: string[] = [];
  for (let i = 0; i < calls; i++) kinds.push((await store.incidents.decide(claim(`k${i % 3}`))).outcome.kind);
  // What the store decided, untouched by the wrapper: three creates, the rest re-fires.
  assert.deepEqual(kinds.slice(0, 4), ['created', 'created', 'created', 'unchanged']);
  assert.equal((await raw.incidents.get('t', 'k0'))?.key, 'k0');
  // The first call, then one in the sample: 17 calls time three.
  assert.equal(await count('incidents.decide', 'ok'), 3);
  assert.equal(await count('incidents.get', 'ok'), 0);
  assert.equal((await store.incidents.get('t', 'k1'))?.key, 'k1');
  assert.equal(await count('incidents.get', 'ok'), 1);

  // A closed store throws: timed and unsampled calls alike pass the error on.
  await raw.close();
  for (let i = 0; i < STORE_TIMING_SAMPLE; i++) await assert.rejects(store.incidents.get('t', 'k1'));
  assert.equal(await count('incidents.get', 'ok'), 1);
  assert.equal(await count('incidents.get', 'error'), 1);
});

test('timing a call adds no step to it: calls of one operation settle for their callers in the order the store settled them', async () => {
  const latency = new Histogram({ name: 'lat2', help: 'h', labelNames: ['operation', 'outcome'], buckets: [1], registers: [new Registry()] });
  const store = instrumentStore(new MemoryStore(manualClock(1_000)), latency);
  // Copies of one new key at once, as an HA pair sends them: the store creates with the first and
  // suppresses the rest, in call order. A timed call that settled a step later than its neighbours
  // would let a copy's answer (and its line in the key's history) come before the CREATE's.
  const settled: string[] = [];
  const calls = Array.from({ length: STORE_TIMING_SAMPLE * 3 }, (_, i) =>
    store.incidents.decide(claim(`race-${Math.floor(i / 2)}`)).then((r) => settled.push(`${i}:${r.outcome.kind}`)),
  );
  await Promise.all(calls);
  assert.deepEqual(
    settled,
    calls.map((_, i) => `${i}:${i % 2 === 0 ? 'created' : 'unchanged'}`),
  );
});
