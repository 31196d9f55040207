import type { ManualClock } from '../../src/core/clock.js';
import { MemoryStore } from '../../src/store/memory/memory-store.js';
import { GRACE_UNITS, incidentStoreContract, type StoreFixture } from './incident-store.contract.js';
import { eventStoreContract } from './event-store.contract.js';
import { windowStoreContract } from './window-store.contract.js';
import { ticketStoreContract } from './ticket-store.contract.js';
import { heartbeatStoreContract } from './heartbeat-store.contract.js';
import { flapStoreContract } from './flap-store.contract.js';
import { groupStoreContract } from './group-store.contract.js';
import { requestStoreContract } from './request-store.contract.js';
import { silenceStoreContract } from './silence-store.contract.js';
import { inhibitorStoreContract } from './inhibitor-store.contract.js';
import { deliveryStoreContract } from './delivery-store.contract.js';
import { rulesContract } from './rules.contract.js';

const unit = 1000;
const fixture = (clock: ManualClock): StoreFixture => ({
  store: new MemoryStore(clock, GRACE_UNITS * unit),
  clock,
  unit,
  advance: async (ms) => clock.advance(ms),
  cleanup: () => {},
});

incidentStoreContract('memory', { peers: false }, fixture);
eventStoreContract('memory', fixture);
windowStoreContract('memory', fixture);
requestStoreContract('memory', fixture);
silenceStoreContract('memory', fixture);
inhibitorStoreContract('memory', fixture);
ticketStoreContract('memory', fixture);
heartbeatStoreContract('memory', fixture);
flapStoreContract('memory', fixture);
groupStoreContract('memory', fixture);
deliveryStoreContract('memory', fixture);
rulesContract('memory', fixture);
