import type { ManualClock } from '../../src/core/clock.js';
import { MemoryStore } from '../../src/store/memory/memory-store.js';
import { GRACE_UNITS, type StoreFixture } from './incident-store.contract.js';
import { everyFacetContract } from './every-facet.js';
import { rulesContract } from './rules.contract.js';

const unit = 1000;
const fixture = (clock: ManualClock): StoreFixture => ({
  store: new MemoryStore(clock, GRACE_UNITS * unit),
  clock,
  unit,
  advance: async (ms) => clock.advance(ms),
  cleanup: () => {},
});

everyFacetContract('memory', { peers: false, sweepsOnClock: true }, fixture);
rulesContract('memory', fixture);
