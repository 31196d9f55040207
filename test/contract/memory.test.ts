import { MemoryStore } from '../../src/store/memory/memory-store.js';
import { incidentStoreContract } from './incident-store.contract.js';

incidentStoreContract('memory', (clock) => ({ store: new MemoryStore(clock), cleanup: () => {} }));
