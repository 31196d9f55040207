import type { Clock } from '../../core/clock.js';
import type { DeviceEvent } from '../../core/event.js';
import { type AckOutcome, DEFAULT_EXPIRED_GRACE_MS, isStale, RESOLUTION_MEMORY_MS, staleResult, nextIncidentRecord, outboxEntries, type DedupStore, type IncidentClaim, type IncidentRecord, type OutboxEntry, type OutboxPayload } from '../contract.js';
import { MemoryEvents } from './memory-events.js';
import { MemoryDeliveries } from './memory-deliveries.js';
import type { WindowClaim } from '../delivery-contract.js';

const SWEEP_BATCH = 10_000;

/**
 * In-process store: for tests and for embedding in a single process. Each
 * operation runs synchronously to completion before any other JavaScript can,
 * which is its atomic step. Nothing survives the process.
 */
export class MemoryStore implements DedupStore {
  readonly kind = 'memory';
  private readonly incidents = new Map<string, IncidentRecord>();
  private closed = false;
  private readonly events: MemoryEvents;
  private readonly windows = new Map<string, number>();
  /** key → the createdAt of the episode that was acknowledged */
  private readonly acks = new Map<string, number>();
  /** key → the last recorded resolution of an alert episode, and until when it is remembered */
  private readonly resolutions = new Map<string, { endedAt: number; until: number }>();
  private readonly outbox: OutboxEntry[] = [];
  readonly deliveries: MemoryDeliveries;

  constructor(
    private readonly clock: Clock,
    private readonly expiredGraceMs = DEFAULT_EXPIRED_GRACE_MS,
  ) {
    this.events = new MemoryEvents(clock, this.outbox);
    this.deliveries = new MemoryDeliveries(clock, this.outbox);
  }


  async applyEvent(event: DeviceEvent, retentionMs: number) {
    this.assertOpen();
    return this.events.apply(event, retentionMs);
  }

  async getDevice(tenant: string, device: string) {
    this.assertOpen();
    return this.events.get(tenant, device);
  }

  async listDevices(tenant: string | null, limit: number) {
    return this.events.list(tenant, limit);
  }

  async countStaleDevices(observedBefore: number) {
    return this.events.countStale(observedBefore);
  }

  async claimWindow(tenant: string, key: string, ttlMs: number, outbox?: OutboxPayload): Promise<WindowClaim> {
    this.assertOpen();
    const now = this.clock.now();
    const id = MemoryStore.id(tenant, key);
    if ((this.windows.get(id) ?? 0) > now) {
      return this.deliveries.requeueFailing({ kind: 'violation', tenant, key }, now) > 0 ? 'requeued' : 'repeat';
    }
    this.windows.set(id, now + ttlMs);
    if (outbox) this.outbox.push(outboxEntries.violation(tenant, key, outbox, now));
    return 'claimed';
  }

  async listOutbox() {
    return this.outbox.map((e) => ({ ...e, data: { ...e.data } }));
  }

  private static id(tenant: string, key: string): string {
    return `${tenant}\u0000${key}`;
  }

  private live(tenant: string, key: string, now: number): IncidentRecord | null {
    const rec = this.incidents.get(MemoryStore.id(tenant, key));
    return rec && rec.expiresAt > now ? rec : null;
  }

  /** The record if live, or expired but still inside the grace. */
  private kept(tenant: string, key: string, now: number): IncidentRecord | null {
    const rec = this.incidents.get(MemoryStore.id(tenant, key));
    return rec && rec.expiresAt + this.expiredGraceMs > now ? rec : null;
  }

  async decideIncident(claim: IncidentClaim) {
    this.assertOpen();
    const now = this.clock.now();
    const resolution = this.resolutions.get(MemoryStore.id(claim.tenant, claim.key));
    if (isStale(claim, resolution && resolution.until > now ? resolution.endedAt : null)) {
      const live = this.live(claim.tenant, claim.key, now);
      return staleResult(live ? { ...live } : null, claim, now);
    }
    const result = nextIncidentRecord(this.kept(claim.tenant, claim.key, now), claim, now);
    this.incidents.set(MemoryStore.id(claim.tenant, claim.key), result.record);
    if (result.outcome.kind !== 'created') this.deliveries.requeueFailing({ kind: 'incident', tenant: claim.tenant, key: claim.key }, now);
    const entry = outboxEntries.incident(claim, result.outcome.kind, now);
    if (entry) this.outbox.push(entry);
    return { outcome: result.outcome, record: { ...result.record } };
  }

  async getIncident(tenant: string, key: string) {
    this.assertOpen();
    const rec = this.live(tenant, key, this.clock.now());
    return rec ? { ...rec } : null;
  }

  async closeIncident(tenant: string, key: string, resolvedAt?: number) {
    this.assertOpen();
    const now = this.clock.now();
    if (resolvedAt !== undefined) {
      const id = MemoryStore.id(tenant, key);
      const old = this.resolutions.get(id);
      this.resolutions.set(id, { endedAt: Math.max(resolvedAt, old && old.until > now ? old.endedAt : resolvedAt), until: now + RESOLUTION_MEMORY_MS });
    }
    const live = this.live(tenant, key, now);
    this.incidents.delete(MemoryStore.id(tenant, key));
    this.acks.delete(MemoryStore.id(tenant, key));
    if (live) this.outbox.push(outboxEntries.close(live, now));
    return live ? { ...live } : null;
  }

  async acknowledgeIncident(tenant: string, key: string): Promise<AckOutcome> {
    this.assertOpen();
    const now = this.clock.now();
    const live = this.live(tenant, key, now);
    if (!live) return 'absent';
    const id = MemoryStore.id(tenant, key);
    if (this.acks.get(id) === live.createdAt) return 'repeat';
    this.acks.set(id, live.createdAt);
    this.outbox.push(outboxEntries.acknowledged(live, now));
    return 'acknowledged';
  }

  async listIncidents(tenant: string, limit: number) {
    const now = this.clock.now();
    return [...this.incidents.values()]
      .filter((r) => r.tenant === tenant && r.expiresAt > now)
      .sort((a, b) => b.lastSeenAt - a.lastSeenAt)
      .slice(0, limit)
      .map((r) => ({ ...r }));
  }

  async countLiveIncidents() {
    const now = this.clock.now();
    let n = 0;
    for (const rec of this.incidents.values()) if (rec.expiresAt > now) n++;
    return n;
  }

  async sweepExpired() {
    const now = this.clock.now();
    let n = this.events.sweep();
    for (const [id, r] of this.resolutions) if (r.until <= now) this.resolutions.delete(id);
    for (const [id, until] of this.windows) {
      if (until <= now) {
        this.windows.delete(id);
        n++;
      }
    }
    for (const [id, rec] of this.incidents) {
      if (n >= SWEEP_BATCH) break;
      if (rec.expiresAt + this.expiredGraceMs <= now) {
        this.incidents.delete(id);
        this.acks.delete(id);
        n++;
      }
    }
    return n;
  }

  async ping() {
    this.assertOpen();
  }

  async close() {
    this.closed = true;
  }

  private assertOpen() {
    if (this.closed) throw new Error('store is closed');
  }
}
