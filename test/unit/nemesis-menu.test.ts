/**
 * The nemesis's menus: a kept seed replays the schedule it failed with, so a
 * new menu adds faults without changing what an older one draws.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { drawSchedule, MENU } from '../chaos/nemesis/schedule.js';

const seeds = Array.from({ length: 300 }, (_, i) => 1000 + i);
const kinds = (s: ReturnType<typeof drawSchedule>) => s.faults.map((f) => f.fault.kind);

test('menu 1 draws no Postgres crash; the newest menu does, for some seeds', () => {
  assert.ok(MENU >= 2);
  assert.ok(seeds.every((seed) => !kinds(drawSchedule(seed, 'postgres', 1)).includes('store-restart')));
  const crashing = seeds.filter((seed) => kinds(drawSchedule(seed, 'postgres')).includes('store-restart'));
  assert.ok(crashing.length > 0, 'some Postgres schedules crash the store');
});

test('the same seed and menu draw the same schedule; Redis draws are the same on every menu', () => {
  for (const seed of seeds.slice(0, 50)) {
    assert.deepEqual(drawSchedule(seed, 'postgres', 1), drawSchedule(seed, 'postgres', 1));
    const [a, b] = [drawSchedule(seed, 'redis', 1), drawSchedule(seed, 'redis', MENU)];
    assert.deepEqual({ ...a, menu: 0 }, { ...b, menu: 0 });
  }
});

test('a menu that does not exist is refused, naming the ones that do', () => {
  assert.throws(() => drawSchedule(1, 'redis', 0), /no nemesis menu 0 \(1 to \d+\)/);
  assert.throws(() => drawSchedule(1, 'redis', MENU + 1), /no nemesis menu/);
});
