import { test } from 'node:test';
import assert from 'node:assert/strict';
import { manualClock } from '../../src/core/clock.js';
import { SilenceCache } from '../../src/mute/silence-cache.js';
import type { Silence } from '../../src/store/contract/index.js';
import { MemoryStore } from '../../src/store/memory/memory-store.js';

const H = 3_600_000;
const labels = { element_id: 'olt-1', fault_class: 'LOS', severity: 'MAJOR', kind: 'incident', dedup_key: 'dedup:x' };

// A tenant keeps up to 1,000 ended silences (each up to 16 KB) for the API's
// list; they mute nothing. A replica's copy reloads at every write, so it
// reads only the silences that have not ended: one tenant's churn does not
// make every replica read megabytes of ended silences again.
test("a replica's silence copy loads only silences that have not ended, then only what changed, and mutes and unmutes on time", async () => {
  const clock = manualClock(1_800_000_000_000);
  const store = new MemoryStore(clock);
  const t0 = clock.now();
  const silence = (id: string, over: Partial<Silence> = {}): Silence => ({
    id,
    tenant: 'acme',
    matchers: [{ name: 'fault_class', value: 'LOS', isRegex: false, isEqual: true }],
    startsAt: t0,
    endsAt: t0 + H,
    createdBy: 'ops',
    comment: 'work',
    updatedAt: t0,
    ...over,
  });
  for (let i = 0; i < 50; i++) {
    await store.silences.create(silence(`ended-${i}`), { open: 1000, ended: 1000 }, t0);
    await store.silences.expire('acme', `ended-${i}`, t0);
  }
  await store.silences.create(silence('active'), { open: 1000, ended: 1000 }, t0);
  await store.silences.create(silence('pending', { startsAt: t0 + H, endsAt: t0 + 2 * H }), { open: 1000, ended: 1000 }, t0);
  const read: Array<number | undefined> = [];
  const since: number[] = [];
  const silences = store.silences;
  const watched = {
    version: () => silences.version(),
    list: (t: string | null, after?: number) => {
      read.push(after);
      return silences.list(t, after);
    },
    changedSince: (v: number) => {
      since.push(v);
      return silences.changedSince(v);
    },
  };
  const cache = new SilenceCache(
    watched as typeof silences,
    (err) => assert.fail(String(err)),
    60_000,
    undefined,
    () => clock.now(),
  );
  await cache.start();
  try {
    assert.deepEqual(read, [t0], 'the reload asked for what ends after now');
    assert.deepEqual((await cache.list('acme')).map((s) => s.id).sort(), ['active', 'pending'], 'the 50 ended silences were not loaded');
    assert.equal((await silences.list('acme')).length, 52, 'the store still lists them all for the API');
    assert.equal(cache.mutedBy('acme', labels, clock.now())?.id, 'active');
    // A write: the next load reads only what was written since the version it loaded, not every silence again.
    const loaded = await silences.version();
    await store.silences.create(
      silence('later', { matchers: [{ name: 'fault_class', value: 'LOF', isRegex: false, isEqual: true }] }),
      { open: 1000, ended: 1000 },
      t0,
    );
    await cache.refresh();
    assert.deepEqual([read.length, since], [1, [loaded]], 'no second full read; one read of the changes since');
    assert.equal(cache.mutedBy('acme', { ...labels, fault_class: 'LOF' }, clock.now())?.id, 'later');
    await store.silences.expire('acme', 'later', clock.now());
    await cache.refresh();
    assert.equal(cache.mutedBy('acme', { ...labels, fault_class: 'LOF' }, clock.now()), null, 'an expiry reaches the copy as a change');
    assert.deepEqual((await cache.list('acme')).map((s) => s.id).sort(), ['active', 'pending']);
    clock.advance(H + 1);
    assert.equal(cache.mutedBy('acme', labels, clock.now())?.id, 'pending', 'the one that ended mutes no more; the pending one has begun');
    clock.advance(H);
    assert.equal(cache.mutedBy('acme', labels, clock.now()), null, 'both ended, without a reload');
  } finally {
    cache.stop();
    await store.close();
  }
});
