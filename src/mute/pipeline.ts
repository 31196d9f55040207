import type { Config } from '../config/schema.js';
import type { FlapStore } from '../store/contract/index.js';
import { AutoPause } from './auto-pause.js';
import { Flapping } from './flapping.js';
import { GroupWait } from './group-wait.js';
import { Holds } from './holds.js';
import { MaintenanceWindows } from './maintenance.js';
import { Mutes, type MuteSource } from './mutes.js';

/**
 * The noise controls a delivery passes, in the order they are asked: the
 * mutes (silences, maintenance windows, inhibition; the first that mutes
 * says why) and the holds (auto-pause, flapping, a group's wait). Built here
 * once for the server and for `onceonly simulate`, so both ask the same
 * kinds in the same order: a new kind is its file in `mute/`, a line here
 * and its name in `kinds.ts`. The silences and inhibition are handed in, as
 * each caller keeps them differently (a cache that follows the store, a
 * simulation's own).
 */
export function noiseControls(o: { config: () => Config; flaps: FlapStore; silences: MuteSource; inhibition: MuteSource }): { mutes: Mutes; holds: Holds } {
  return {
    mutes: new Mutes([o.silences, new MaintenanceWindows(() => o.config().maintenance), o.inhibition]),
    holds: new Holds([
      new AutoPause(() => o.config().auto_pause, o.flaps),
      new Flapping(() => o.config().flapping, o.flaps),
      new GroupWait(() => o.config().grouping),
    ]),
  };
}
