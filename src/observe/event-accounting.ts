import { Counter, Gauge, type Registry } from 'prom-client';
import { EVENT_REJECT_REASONS, gapSize, type EventOutcome } from '../core/event.js';

/** Rejections at the boundary, beside the store's own reasons. */
export const BOUNDARY_REJECT_REASONS = ['invalid', 'payload_too_large', 'unsupported_media_type', 'forbidden', 'unavailable', 'internal'] as const;
export type EventRejectReason = (typeof EVENT_REJECT_REASONS)[number] | (typeof BOUNDARY_REJECT_REASONS)[number];

export interface EventStats {
  received: number;
  applied: number;
  duplicate: number;
  rejected: Record<string, number>;
  sequence_gaps: number;
}

/**
 * The seed's accounting invariant at the boundary of this process:
 *   received = applied + duplicate + sum(rejected by reason)
 * Every request to POST /v1/events lands in exactly one bucket, including
 * those refused before the store (invalid, too large, unavailable). Gaps count
 * missing sequences, separately. Counters are per process, like any
 * Prometheus counter: sum them over replicas.
 */
export class EventAccounting {
  private readonly stats: EventStats = { received: 0, applied: 0, duplicate: 0, rejected: {}, sequence_gaps: 0 };
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
    this.transitions = new Counter({ name: 'onceonly_event_transitions_total', help: 'Applied events that changed a device state (each is one notification).', registers });
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

  decided(o: EventOutcome): void {
    this.stats.received++;
    this.received.inc();
    if (o.outcome === 'rejected') return this.countRejected(o.reason);
    this.stats[o.outcome]++;
    this.outcomes.labels(o.outcome, '').inc();
    const missing = gapSize(o.gap);
    this.stats.sequence_gaps += missing;
    this.gaps.inc(missing);
    if (o.transition) this.transitions.inc();
  }

  /** A request refused before it reached the store. */
  refused(reason: (typeof BOUNDARY_REJECT_REASONS)[number]): void {
    this.stats.received++;
    this.received.inc();
    this.countRejected(reason);
  }

  private countRejected(reason: EventRejectReason): void {
    this.stats.rejected[reason] = (this.stats.rejected[reason] ?? 0) + 1;
    this.outcomes.labels('rejected', reason).inc();
  }

  snapshot(): EventStats {
    return { ...this.stats, rejected: { ...this.stats.rejected } };
  }
}
