import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { DecisionObserver, IncidentDecision } from '../engine/deduplicator.js';
import { DECISION_REASONS } from '../core/decision.js';
import type { DedupStore } from '../store/contract.js';

/**
 * One registry per server, injected (never prom-client's global one), so two
 * servers in one test process do not share counters. Labels are small closed
 * sets: never keys, devices or tenants' identifiers.
 */
export class Metrics implements DecisionObserver {
  readonly registry = new Registry();
  readonly decisions: Counter<'decision' | 'reason'>;
  readonly rejected: Counter<'route' | 'code'>;
  readonly updatesPerIncident: Histogram<'ended'>;

  constructor(store: DedupStore) {
    collectDefaultMetrics({ register: this.registry, prefix: 'onceonly_' });
    this.decisions = new Counter({
      name: 'onceonly_incident_decisions_total',
      help: 'Incident decisions by decision and reason (the decision mix).',
      labelNames: ['decision', 'reason'],
      registers: [this.registry],
    });
    // Start every known series at zero so a rate() has a baseline before the first event.
    for (const [decision, reason] of DECISION_REASONS) this.decisions.labels(decision, reason).inc(0);
    this.rejected = new Counter({
      name: 'onceonly_requests_rejected_total',
      help: 'Requests refused before any decision, by route and error code.',
      labelNames: ['route', 'code'],
      registers: [this.registry],
    });
    this.updatesPerIncident = new Histogram({
      name: 'onceonly_incident_updates_per_incident',
      help: 'UPDATEs an incident had when it ended (closed, or found expired); many means a churning fingerprint.',
      labelNames: ['ended'],
      buckets: [0, 1, 2, 3, 5, 10, 20, 50],
      registers: [this.registry],
    });
    new Gauge({
      name: 'onceonly_incidents_live',
      help: 'Incident keys currently live (unexpired) in the store.',
      registers: [this.registry],
      async collect() {
        this.set(await store.countLiveIncidents());
      },
    });
  }

  decided(d: IncidentDecision): void {
    this.decisions.labels(d.decision, d.reason).inc();
  }

  ended(updates: number, how: 'closed' | 'expired'): void {
    this.updatesPerIncident.labels(how).observe(updates);
  }
}
