import type { EpochMark } from './epoch.js';
import type { DeliveryStore } from './deliveries.js';
import type { DeviceStore } from './devices.js';
import type { IncidentStore, SharedIncidentStore } from './incidents.js';
import type { QueryStore } from './queries.js';
import type { RequestStore } from './requests.js';
import type { SilenceStore } from './silences.js';
import type { InhibitorStore } from './inhibitors.js';
import type { TicketStore } from './tickets.js';
import type { HeartbeatStore } from './heartbeats.js';
import type { FlapStore } from './flaps.js';
import type { GroupStore } from './groups.js';
import type { WindowStore } from './windows.js';
import type { HistoryStore } from './history.js';

export * from './deliveries.js';
export * from './devices.js';
export * from './incidents.js';
export * from './ledger.js';
export * from './outbox.js';
export * from './queries.js';
export * from './requests.js';
export * from './silences.js';
export * from './inhibitors.js';
export * from './tickets.js';
export * from './heartbeats.js';
export * from './flaps.js';
export * from './groups.js';
export * from './windows.js';
export * from './history.js';
export * from './generation.js';
export * from './epoch.js';
export type { OutboxEntry, OutboxPayload } from '../../core/outbox.js';

/**
 * The store contract, in facets. Operations are semantic (decide, close),
 * never raw commands, and each one is ONE atomic step in its backend: no
 * check-then-act across round trips. Times are milliseconds since the epoch
 * from the store's own clock (injected for embedded stores; the server's for
 * remote ones).
 *
 * A facet is a small interface of related operations; decorators (fail-open,
 * instrumentation) wrap a facet as a whole, so a new operation touches its
 * facet's contract, one file per backend and one contract case.
 */
export interface DedupStore {
  /** `memory`, `sqlite`, … : for logs and metrics. */
  readonly kind: string;
  readonly incidents: IncidentStore;
  readonly devices: DeviceStore;
  readonly windows: WindowStore;
  /** Delivery state, kept beside the decisions and the outbox they write. */
  readonly deliveries: DeliveryStore;
  readonly queries: QueryStore;
  /** Producers' Idempotency-Keys and the answers they got. */
  readonly requests: RequestStore;
  /** Silences, shared by every replica. */
  readonly silences: SilenceStore;
  /** Live incidents that can inhibit others (inhibition rules). */
  readonly inhibitors: InhibitorStore;
  /** Which ticket a receiver opened for a key (adapters whose receiver's search lags). */
  readonly tickets: TicketStore;
  /** Heartbeats' last pings and claimed misses, shared by every replica. */
  readonly heartbeats: HeartbeatStore;
  /** Each key's recent creates and closes (flapping detection). */
  readonly flaps: FlapStore;
  /** Incident groups (grouping.by) and their members. */
  readonly groups: GroupStore;
  /** Each key's history: what was decided, muted, routed and delivered (GET /v1/incidents/{key}/history). */
  readonly history: HistoryStore;
  /** Deletes what outlived its lifetime (the rules in each facet's contract), a bounded batch at a time; returns how many went. */
  sweepExpired(): Promise<number>;
  /** Prepares the store before first use (Postgres: applies migrations); optional. */
  init?(): Promise<void>;
  /** Throws when the store cannot serve. */
  ping(): Promise<void>;
  /**
   * The epoch marker (epoch.ts), in one atomic step: written when absent,
   * its count raised by one, both returned.
   */
  tickEpoch(): Promise<EpochMark>;
  /** Fail-open's health probe, when it differs from ping: one that does not queue behind this replica's own work. */
  probeHealth?(): Promise<void>;
  close(): Promise<void>;
}

/**
 * The store's facets, listed once: the decorators (instrumentation,
 * fail-open) wrap each facet by this list. A facet added to `DedupStore`
 * and not here fails to compile (the check below names it).
 */
export const FACET_NAMES = [
  'incidents',
  'devices',
  'windows',
  'deliveries',
  'queries',
  'requests',
  'silences',
  'inhibitors',
  'tickets',
  'heartbeats',
  'flaps',
  'groups',
  'history',
] as const satisfies ReadonlyArray<keyof DedupStore>;

export type FacetName = (typeof FACET_NAMES)[number];

/** The facets of a store, by name. */
export type Facets = Pick<DedupStore, FacetName>;

/** Every member of DedupStore that is a facet (neither a method nor `kind`). */
type FacetMembers = {
  [K in keyof DedupStore]-?: K extends 'kind' ? never : NonNullable<DedupStore[K]> extends (...a: never[]) => unknown ? never : K;
}[keyof DedupStore];
/** Compiles only while FACET_NAMES lists every facet: otherwise its type is the missing names, and `true` is not one. */
export const EVERY_FACET_LISTED: [Exclude<FacetMembers, FacetName>] extends [never] ? true : Exclude<FacetMembers, FacetName> = true;

/** A store several replicas share (Redis, Postgres): its incidents can replay a fail-open journal. */
export interface SharedStore extends DedupStore {
  readonly incidents: SharedIncidentStore;
}

/** Rows a sweep deletes per table per pass: small enough that no pass holds a lock for long. */
export const SWEEP_BATCH = 1000;
