import type { Clock } from '../../core/clock.js';
import type { OutboxEntry } from '../../core/outbox.js';
import type { QueryStore } from '../contract/index.js';
import type { MemoryDevices } from './memory-devices.js';
import type { MemoryIncidents } from './memory-incidents.js';

/** Lists and counts over the memory store's maps. */
export class MemoryQueries implements QueryStore {
  constructor(
    private readonly clock: Clock,
    private readonly incidents: MemoryIncidents,
    private readonly devices: MemoryDevices,
    private readonly outbox: OutboxEntry[],
  ) {}

  async listIncidents(tenant: string, limit: number) {
    const now = this.clock.now();
    return [...this.incidents.records.values()]
      .filter((r) => r.tenant === tenant && r.expiresAt > now)
      .sort((a, b) => b.lastSeenAt - a.lastSeenAt)
      .slice(0, limit)
      .map((r) => ({ ...r }));
  }

  async countLiveIncidents() {
    const now = this.clock.now();
    let n = 0;
    for (const rec of this.incidents.records.values()) if (rec.expiresAt > now) n++;
    return n;
  }

  async listDevices(tenant: string | null, limit: number) {
    return [...this.devices.states.entries()]
      .filter(([, d]) => tenant === null || d.tenant === tenant)
      .sort(([, a], [, b]) => a.observedAt - b.observedAt)
      .slice(0, limit)
      .map(([dev, d]) => ({ ...d, gaps: this.devices.gapsOf(dev) }));
  }

  async countStaleDevices(observedBefore: number) {
    let n = 0;
    for (const d of this.devices.states.values()) if (d.observedAt < observedBefore) n++;
    return n;
  }

  async listOutbox() {
    return this.outbox.map((e) => ({ ...e, data: { ...e.data } }));
  }
}
