import type { Clock } from '../../core/clock.js';
import type { OutboxEntry } from '../../core/outbox.js';
import { type DedupStore, type EpochMark, newEpoch, SWEEP_BATCH } from '../contract/index.js';
import { MemoryDeliveries } from './memory-deliveries.js';
import { MemoryDevices } from './memory-devices.js';
import { MemoryIncidents } from './memory-incidents.js';
import { MemoryQueries } from './memory-queries.js';
import { MemoryWindows } from './memory-windows.js';
import { MemoryRequests } from './memory-requests.js';
import { MemorySilences } from './memory-silences.js';
import { MemoryInhibitors } from './memory-inhibitors.js';
import { MemoryTickets } from './memory-tickets.js';
import { MemoryHeartbeats } from './memory-heartbeats.js';
import { MemoryFlaps } from './memory-flaps.js';
import { MemoryGroups } from './memory-groups.js';
import { MemoryHistory } from './memory-history.js';

/**
 * In-process store: for tests and for embedding in a single process. Each
 * operation runs synchronously to completion before any other JavaScript can,
 * which is its atomic step. Nothing survives the process. The facets share
 * one outbox array, as the other backends share one outbox table or stream.
 */
export class MemoryStore implements DedupStore {
  readonly kind = 'memory';
  private closed = false;
  readonly incidents: MemoryIncidents;
  readonly devices: MemoryDevices;
  readonly windows: MemoryWindows;
  readonly deliveries: MemoryDeliveries;
  readonly queries: MemoryQueries;
  readonly requests: MemoryRequests;
  readonly silences: MemorySilences;
  readonly inhibitors: MemoryInhibitors;
  readonly tickets: MemoryTickets;
  readonly heartbeats: MemoryHeartbeats;
  readonly flaps: MemoryFlaps;
  readonly groups: MemoryGroups;
  readonly history: MemoryHistory;

  constructor(clock: Clock, expiredGraceMs?: number) {
    const outbox: OutboxEntry[] = [];
    const assertOpen = () => {
      if (this.closed) throw new Error('store is closed');
    };
    this.deliveries = new MemoryDeliveries(clock, outbox);
    this.incidents = new MemoryIncidents(clock, outbox, this.deliveries, assertOpen, expiredGraceMs);
    this.devices = new MemoryDevices(clock, outbox, assertOpen);
    this.windows = new MemoryWindows(clock, outbox, this.deliveries, assertOpen);
    this.queries = new MemoryQueries(clock, this.incidents, this.devices, outbox);
    this.requests = new MemoryRequests(clock, assertOpen);
    this.silences = new MemorySilences(clock, assertOpen);
    this.inhibitors = new MemoryInhibitors(clock, assertOpen);
    this.tickets = new MemoryTickets(clock, assertOpen);
    this.heartbeats = new MemoryHeartbeats(assertOpen);
    this.flaps = new MemoryFlaps(clock, assertOpen);
    this.groups = new MemoryGroups(outbox, assertOpen);
    this.history = new MemoryHistory(clock, assertOpen);
  }

  async sweepExpired() {
    return (
      this.devices.sweep(SWEEP_BATCH) +
      this.windows.sweep(SWEEP_BATCH) +
      this.incidents.sweep(SWEEP_BATCH) +
      this.deliveries.sweep(SWEEP_BATCH) +
      this.requests.sweep(SWEEP_BATCH) +
      this.silences.sweep(SWEEP_BATCH) +
      this.inhibitors.sweep(SWEEP_BATCH) +
      this.tickets.sweep(SWEEP_BATCH) +
      this.flaps.sweep(SWEEP_BATCH) +
      this.history.sweep(SWEEP_BATCH)
    );
  }

  /** This process's own marker: the memory store's data lives and dies with it. */
  private readonly epochMark: EpochMark = { epoch: newEpoch(), seq: 0 };
  async tickEpoch(): Promise<EpochMark> {
    this.epochMark.seq++;
    return { ...this.epochMark };
  }

  async ping() {
    if (this.closed) throw new Error('store is closed');
  }

  async close() {
    this.closed = true;
  }
}
