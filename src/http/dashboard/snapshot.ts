import type { Clock } from '../../core/clock.js';
import type { Deduplicator } from '../../engine/deduplicator.js';
import type { IncidentView } from '../../engine/views.js';
import type { DeviceView, EventIngest } from '../../engine/events.js';
import type { EventAccounting, EventStats } from '../../observe/event-accounting.js';
import type { DecisionTally, Tally } from '../../observe/decision-tally.js';
import type { Metrics } from '../../observe/metrics.js';
import type { DeliveryStore } from '../../store/contract/index.js';
import { deadLetterView } from '../routes/dead-letters.js';

export interface DashboardDeps {
  dedup: Deduplicator;
  tally: DecisionTally;
  events: EventIngest;
  accounting: EventAccounting;
  deliveries: DeliveryStore;
  metrics: Metrics;
  clock: Clock;
}

export interface Snapshot {
  at: string;
  tenant: string;
  decisions: Tally;
  incidents: Array<IncidentView & { age_seconds: number }>;
  devices: Array<DeviceView & { gaps: number }>;
  events: EventStats & { invariant_holds: boolean };
  delivery: {
    adapters: Record<string, Record<string, number>>;
    pending: number | null;
    dead: number | null;
    lag_seconds: number | null;
  };
  dead_letters: ReturnType<typeof deadLetterView>[];
}

const sum = (r: Record<string, number>) => Object.values(r).reduce((a, b) => a + b, 0);

/**
 * What the dashboard shows, for one tenant: its decision mix, its live
 * incidents, its events accounting and dead letters, and the delivery state
 * (per adapter, from this process's counters; backlog across the store).
 */
export async function snapshot(d: DashboardDeps, tenant: string, scoped: boolean): Promise<Snapshot> {
  const now = d.clock.now();
  const [incidents, devices, dead, backlog, counted] = await Promise.all([
    d.dedup.listIncidents(tenant, 100).catch(() => []),
    // Without tenants, events may name any tenant_id: show every device.
    d.events.devices(scoped ? tenant : null, 100).catch(() => []),
    d.deliveries.deadLetters(tenant, 50).catch(() => []),
    d.deliveries.backlog().catch(() => null),
    d.metrics.deliveries.get(),
  ]);
  const adapters: Record<string, Record<string, number>> = {};
  for (const v of counted.values) {
    const a = String(v.labels.adapter);
    const o = String(v.labels.outcome);
    (adapters[a] ??= {})[o] = (adapters[a]![o] ?? 0) + v.value;
  }
  const events = d.accounting.snapshot(tenant);
  return {
    at: new Date(now).toISOString(),
    tenant,
    decisions: d.tally.of(tenant),
    incidents: incidents.map((i) => ({ ...i, age_seconds: Math.max(0, Math.round((now - Date.parse(i.created_at)) / 1000)) })),
    devices,
    events: { ...events, invariant_holds: events.received === events.applied + events.duplicate + sum(events.rejected) },
    delivery: {
      adapters,
      pending: backlog?.pending ?? null,
      dead: backlog?.dead ?? null,
      lag_seconds: backlog ? (backlog.oldestAt === null ? 0 : Math.max(0, Math.round((now - backlog.oldestAt) / 1000))) : null,
    },
    dead_letters: dead.map(deadLetterView),
  };
}
