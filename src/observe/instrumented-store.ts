import type { Histogram } from 'prom-client';
import type { DedupStore, IncidentClaim, OutboxPayload } from '../store/contract.js';
import type { DeviceEvent } from '../core/event.js';

/**
 * Times every store call the engine makes (the seed's "store round trip under
 * 2 ms" is watched here), by operation and outcome. Delegates everything else.
 */
export class InstrumentedStore implements DedupStore {
  readonly kind: string;

  constructor(
    readonly inner: DedupStore,
    private readonly latency: Histogram<'operation' | 'outcome'>,
  ) {
    this.kind = inner.kind;
  }

  /** Present only when the inner store keeps an audit trail. */
  get auditTrail() {
    return this.inner.auditTrail?.bind(this.inner);
  }

  /** Delivery calls are timed by the worker, per adapter. */
  get deliveries() {
    return this.inner.deliveries;
  }

  private async timed<T>(operation: string, call: () => Promise<T>): Promise<T> {
    const end = this.latency.startTimer({ operation });
    try {
      const r = await call();
      end({ outcome: 'ok' });
      return r;
    } catch (err) {
      end({ outcome: 'error' });
      throw err;
    }
  }

  decideIncident(claim: IncidentClaim) {
    return this.timed('decide_incident', () => this.inner.decideIncident(claim));
  }
  getIncident(tenant: string, key: string) {
    return this.timed('get_incident', () => this.inner.getIncident(tenant, key));
  }
  closeIncident(tenant: string, key: string, resolvedAt?: number) {
    return this.timed('close_incident', () => this.inner.closeIncident(tenant, key, resolvedAt));
  }
  acknowledgeIncident(tenant: string, key: string) {
    return this.timed('acknowledge_incident', () => this.inner.acknowledgeIncident(tenant, key));
  }
  applyEvent(event: DeviceEvent, retentionMs: number) {
    return this.timed('apply_event', () => this.inner.applyEvent(event, retentionMs));
  }
  claimWindow(tenant: string, key: string, ttlMs: number, outbox?: OutboxPayload) {
    return this.timed('claim_window', () => this.inner.claimWindow(tenant, key, ttlMs, outbox));
  }
  getDevice(tenant: string, device: string) {
    return this.timed('get_device', () => this.inner.getDevice(tenant, device));
  }
  listDevices(tenant: string | null, limit: number) {
    return this.inner.listDevices(tenant, limit);
  }
  countStaleDevices(observedBefore: number) {
    return this.inner.countStaleDevices(observedBefore);
  }
  listOutbox() {
    return this.inner.listOutbox();
  }
  countLiveIncidents() {
    return this.inner.countLiveIncidents();
  }
  listIncidents(tenant: string, limit: number) {
    return this.inner.listIncidents(tenant, limit);
  }
  sweepExpired() {
    return this.inner.sweepExpired();
  }
  ping() {
    return this.inner.ping();
  }
  close() {
    return this.inner.close();
  }
}
