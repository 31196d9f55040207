import { MemoryStore } from '../../src/store/memory/memory-store.js';
import { GRACE_UNITS, incidentStoreContract } from './incident-store.contract.js';
import { eventStoreContract } from './event-store.contract.js';
import { windowStoreContract } from './window-store.contract.js';

const unit = 1000;
incidentStoreContract('memory', { exactCount: true, peers: false }, (clock) => ({
  store: new MemoryStore(clock, GRACE_UNITS * unit),
  clock,
  unit,
  advance: async (ms) => clock.advance(ms),
  cleanup: () => {},
}));

eventStoreContract('memory', (clock) => ({
  store: new MemoryStore(clock, GRACE_UNITS * unit),
  clock,
  unit,
  advance: async (ms) => clock.advance(ms),
  cleanup: () => {},
}));

windowStoreContract('memory', (clock) => ({
  store: new MemoryStore(clock),
  clock,
  unit,
  advance: async (ms) => clock.advance(ms),
  cleanup: () => {},
}));
