import { test } from 'node:test';
import assert from 'node:assert/strict';
import { simulate } from '../../src/simulate/simulate.js';
import { parseConfig } from '../../src/config/load.js';
import { manualClock } from '../../src/core/clock.js';
import { MemoryStore } from '../../src/store/memory/memory-store.js';
import type { HistoryAppend } from '../../src/store/contract/index.js';
import '../../src/delivery/adapters/index.js';

/**
 * A folded run of repeats replayed against candidate TTLs: one at least its
 * longest gap keeps the key alive through it (exact, one ticket); a shorter
 * one would expire it inside the run, at a time the history does not keep:
 * the key is listed as approximate and one expiry is replayed.
 */
const T0 = Date.UTC(2026, 11, 3, 9);
const KEY = 'dedup:0123456789abcdef0123456789abcdef';
const LIMITS = { maxEvents: 500, keepMs: 7 * 86_400_000 };
const config = (ttl: number) =>
  parseConfig(`incidents: { ttl_seconds: ${ttl} }\nadapters: [ { name: hook, type: webhook, url: "http://127.0.0.1:9/in" } ]\n`, 'candidate.yaml');

async function recordedDay() {
  const clock = manualClock(T0 + 3_600_000);
  const store = new MemoryStore(clock);
  const arrival = { severity: 'MAJOR', summary: 'OLT 7 lost signal', data: { element_id: 'olt-7', fault_class: 'LOS', root_cause_id: 'c', cleared: false } };
  const events: HistoryAppend[] = [
    { tenant: 'default', key: KEY, event: { at: T0, type: 'decision', decision: 'CREATE', reason: 'new', arrival, fingerprint: 'MAJOR|0', ttl_ms: 3_600_000 } },
    { tenant: 'default', key: KEY, event: { at: T0, type: 'delivery', adapter: 'hook', action: 'create', attempt: 1, status: 'delivered' } },
    // 40 repeats over 40 minutes, the longest gap 10 minutes.
    {
      tenant: 'default',
      key: KEY,
      event: { at: T0 + 60_000, type: 'decision', decision: 'SUPPRESS', reason: 'unchanged' },
      fold: 'SUPPRESS/unchanged/MAJOR|0',
      run: { count: 40, first_at: T0 + 60_000, last_at: T0 + 40 * 60_000, max_gap_ms: 600_000 },
    },
  ];
  await store.history.append(events, LIMITS);
  return { store, clock };
}

test('a run replays exactly under a TTL at least its longest gap, and as approximate under a shorter one', async () => {
  const { store, clock } = await recordedDay();
  const same = await simulate({ source: store, config: config(3600), since: T0 - 1, clock });
  assert.deepEqual([same.keys, same.differences, same.approximate], [{ replayed: 1, not_replayed: 0, differ: 0, approximate: 0 }, [], []]);
  const long = await simulate({ source: store, config: config(601), since: T0 - 1, clock });
  assert.deepEqual([long.differences, long.approximate], [[], []], 'a TTL just over the longest gap keeps the key alive');

  const short = await simulate({ source: store, config: config(300), since: T0 - 1, clock });
  assert.equal(short.approximate.length, 1);
  assert.match(short.approximate[0]!.why, /gap of 600000 ms, longer than the candidate's TTL of 300000 ms/);
  assert.deepEqual(
    short.differences.map((d) => d.first),
    ['hook: 2nd change was not sent, now create'],
  );
  assert.deepEqual(short.adapters.hook, {
    recorded: { created: 1, updated: 0, closed: 0, muted: 0 },
    candidate: { created: 2, updated: 0, closed: 0, muted: 0 },
  });
  await store.close();
});

test('a span with more keys than the bound is refused, saying what to do', async () => {
  const { store, clock } = await recordedDay();
  await assert.rejects(simulate({ source: store, config: config(3600), since: T0 - 1, clock, maxKeys: 0 }), /more than 0 keys .* give a shorter --since/);
  await store.close();
});
