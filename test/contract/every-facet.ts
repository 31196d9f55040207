import type { ManualClock } from '../../src/core/clock.js';
import { FACET_NAMES, type FacetName } from '../../src/store/contract/index.js';
import { deliveryStoreContract } from './delivery-store.contract.js';
import { eventStoreContract } from './event-store.contract.js';
import { flapStoreContract } from './flap-store.contract.js';
import { groupStoreContract } from './group-store.contract.js';
import { historyStoreContract } from './history-store.contract.js';
import { heartbeatStoreContract } from './heartbeat-store.contract.js';
import { incidentStoreContract, type StoreFixture } from './incident-store.contract.js';
import { inhibitorStoreContract } from './inhibitor-store.contract.js';
import { requestStoreContract } from './request-store.contract.js';
import { silenceStoreContract } from './silence-store.contract.js';
import { ticketStoreContract } from './ticket-store.contract.js';
import { windowStoreContract } from './window-store.contract.js';

export type OpenFixture = (clock: ManualClock) => StoreFixture | Promise<StoreFixture>;

/** What a backend's runner says about it, where a suite's cases depend on it. */
export interface Backend {
  /** Whether the fixture offers openPeer (a second connection on the same data). */
  peers: boolean;
  /** false on Redis: it deletes ended records itself, on its own clock, instead of by sweepExpired on the test's. */
  sweepsOnClock: boolean;
  /** Whether its incidents replay fail-open journal entries (Redis, Postgres). */
  replays?: boolean;
}

type Suite = (name: string, backend: Backend, open: OpenFixture) => void;

/**
 * Each facet's contract suite, by the facet list of the store contract: a
 * facet added to `FACET_NAMES` without a suite here does not compile, and
 * every runner (`memory.test.ts`, `sqlite.test.ts`, `postgres.test.ts`,
 * `redis.test.ts`) runs it without a line of its own.
 */
const SUITES: Record<FacetName, Suite> = {
  incidents: (name, b, open) => incidentStoreContract(name, { peers: b.peers, replays: b.replays === true }, open),
  devices: (name, _b, open) => eventStoreContract(name, open),
  windows: (name, _b, open) => windowStoreContract(name, open),
  deliveries: (name, _b, open) => deliveryStoreContract(name, open),
  // The queries facet answers listings and counts of what the other facets write; its cases are
  // theirs (the outbox listed in the delivery suite, devices and stale counts in the event suite,
  // live counts in the incident suite), so it has no suite of its own.
  queries: () => {},
  requests: (name, _b, open) => requestStoreContract(name, open),
  silences: (name, b, open) => silenceStoreContract(name, open, b.sweepsOnClock),
  inhibitors: (name, _b, open) => inhibitorStoreContract(name, open),
  tickets: (name, _b, open) => ticketStoreContract(name, open),
  heartbeats: (name, _b, open) => heartbeatStoreContract(name, open),
  flaps: (name, _b, open) => flapStoreContract(name, open),
  groups: (name, _b, open) => groupStoreContract(name, open),
  history: (name, _b, open) => historyStoreContract(name, open),
};

/** Declares every facet's contract suite on one backend (or only `facets`, for a variant that changes what those depend on). */
export function everyFacetContract(name: string, backend: Backend, open: OpenFixture, facets: readonly FacetName[] = FACET_NAMES): void {
  for (const facet of facets) SUITES[facet](name, backend, open);
}
