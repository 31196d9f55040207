import { Counter, Gauge, type Registry } from 'prom-client';
import { EVENT_REJECT_REASONS, gapSize, type EventOutcome } from '../core/event.js';

/** Rejections at the boundary, beside the store's own reasons. */
export const BOUNDARY_REJECT_REASONS = [
  'invalid',
  'payload_too_large',
  'unsupported_media_type',
  'forbidden',
  'rate_limited',
  'unavailable',
  'internal',
] as const;
export type EventRejectReason = (typeof EVENT_REJECT_REASONS)[number] | (typeof BOUNDARY_REJECT_REASONS)[number];

export interface EventStats {
  received: number;
  applied: number;
  duplicate: number;
  rejected: Record<string, number>;
  sequence_gaps: number;
}

/**
 * The accounting invariant (received = applied + duplicate + rejected) at the boundary of this process:
 *   received = applied + duplicate + sum(rejected by reason)
 * Every request to POST /v1/events lands in exactly one bucket, including
 * those refused before the store (invalid, too large, unavailable). Gaps count
 * missing sequences, separately. Counters are per process, like any
 * Prometheus counter: sum them over replicas. `GET /v1/stats` shows the
 * caller's tenant's own figures (all of them without tenants configured);
 * the metrics have no tenant label.
 */
export class EventAccounting {
  private readonly byTenant = new Map<string, EventStats>();
  private readonly received: Counter;
  private readonly outcomes: Counter<'outcome' | 'reason'>;
  private readonly gaps: Counter;
  private readonly transitions: Counter;

  constructor(registry: Registry, staleDevices: () => Promise<number>) {
    const registers = [registry];
    this.received = new Counter({ name: 'onceonly_events_received_total', help: 'Device events received at POST /v1/events, valid or not.', registers });
    this.outcomes = new Counter({
      name: 'onceonly_events_total',
      help: 'Device events by outcome (applied, duplicate, rejected) and rejection reason; sums to received.',
      labelNames: ['outcome', 'reason'],
      registers,
    });
    this.gaps = new Counter({ name: 'onceonly_event_sequence_gaps_total', help: 'Missing sequence numbers reported in gaps (page on its rate).', registers });
    this.transitions = new Counter({
      name: 'onceonly_event_transitions_total',
      help: 'Applied events that changed a device state (each is one notification).',
      registers,
    });
    new Gauge({
      name: 'onceonly_devices_stale',
      help: 'Devices whose last applied observation is older than events.stale_after_seconds.',
      registers,
      async collect() {
        try {
          this.set(await staleDevices());
        } catch {
          // store down: keep the last value
        }
      },
    });
    this.outcomes.labels('applied', '').inc(0);
    this.outcomes.labels('duplicate', '').inc(0);
    for (const r of [...EVENT_REJECT_REASONS, ...BOUNDARY_REJECT_REASONS]) this.outcomes.labels('rejected', r).inc(0);
  }

  private stats(tenant: string): EventStats {
    let s = this.byTenant.get(tenant);
    if (!s) this.byTenant.set(tenant, (s = { received: 0, applied: 0, duplicate: 0, rejected: {}, sequence_gaps: 0 }));
    return s;
  }

  /** `tenant` is the caller's (not the event's tenant_id, which without tenants configured is free). */
  decided(o: EventOutcome, tenant: string): void {
    const stats = this.stats(tenant);
    stats.received++;
    this.received.inc();
    if (o.outcome === 'rejected') {
      this.countRejected(stats, o.reason);
      return;
    }
    stats[o.outcome]++;
    this.outcomes.labels(o.outcome, '').inc();
    const missing = gapSize(o.gap);
    stats.sequence_gaps += missing;
    this.gaps.inc(missing);
    if (o.transition) this.transitions.inc();
  }

  /** A request refused before it reached the store. */
  refused(reason: (typeof BOUNDARY_REJECT_REASONS)[number], tenant: string): void {
    const stats = this.stats(tenant);
    stats.received++;
    this.received.inc();
    this.countRejected(stats, reason);
  }

  private countRejected(stats: EventStats, reason: EventRejectReason): void {
    stats.rejected[reason] = (stats.rejected[reason] ?? 0) + 1;
    this.outcomes.labels('rejected', reason).inc();
  }

  snapshot(tenant: string): EventStats {
    const s = this.stats(tenant);
    return { ...s, rejected: { ...s.rejected } };
  }
}
