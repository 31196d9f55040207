import type { Clock } from '../../core/clock.js';
import { joinRoute, type OutboxEntry } from '../../core/outbox.js';
import {
  type AckOutcome,
  type EscalateOutcome,
  type EscalationStep,
  DEFAULT_EXPIRED_GRACE_MS,
  type IncidentClaim,
  type IncidentDecisionResult,
  type IncidentRecord,
  type IncidentStore,
  type Origin,
  assertSerializable,
  amendsAnother,
  isStale,
  nextIncidentRecord,
  outboxEntries,
  RESOLUTION_MEMORY_MS,
  staleResult,
} from '../contract/index.js';
import type { MemoryDeliveries } from './memory-deliveries.js';
import { sweepMap } from './sweep.js';

export const memoryId = (tenant: string, key: string) => `${tenant}\u0000${key}`;

/** Incidents for the memory store; every method runs to completion synchronously (its atomic step). */
export class MemoryIncidents implements IncidentStore {
  readonly records = new Map<string, IncidentRecord>();
  /** key → the createdAt of the episode that was acknowledged */
  private readonly acks = new Map<string, number>();
  /** key → the episode (createdAt) an escalation step was written for, and the last step */
  private readonly escalations = new Map<string, { episode: number; step: number }>();
  /** key → the last recorded resolution of an alert episode, and until when it is remembered */
  private readonly resolutions = new Map<string, { endedAt: number; until: number }>();

  constructor(
    private readonly clock: Clock,
    private readonly outbox: OutboxEntry[],
    private readonly deliveries: MemoryDeliveries,
    private readonly assertOpen: () => void,
    private readonly expiredGraceMs = DEFAULT_EXPIRED_GRACE_MS,
  ) {}

  live(tenant: string, key: string, now: number): IncidentRecord | null {
    const rec = this.records.get(memoryId(tenant, key));
    return rec && rec.expiresAt > now ? rec : null;
  }

  /** The record if live, or expired but still inside the grace. */
  private kept(id: string, now: number): IncidentRecord | null {
    const rec = this.records.get(id);
    return rec && rec.expiresAt + this.expiredGraceMs > now ? rec : null;
  }

  async decide(claim: IncidentClaim) {
    return this.decideNow(claim);
  }

  decideNow(claim: IncidentClaim): IncidentDecisionResult {
    this.assertOpen();
    assertSerializable(claim.outbox);
    const now = this.clock.now();
    const id = memoryId(claim.tenant, claim.key);
    const resolution = this.resolutions.get(id);
    const live = this.live(claim.tenant, claim.key, now);
    if (isStale(claim, resolution && resolution.until > now ? resolution.endedAt : null) || amendsAnother(claim, live)) {
      return staleResult(live ? { ...live } : null, claim, now);
    }
    const result = nextIncidentRecord(this.kept(id, now), claim, now);
    this.records.set(id, result.record);
    if (result.outcome.kind !== 'created') this.deliveries.requeueFailing({ kind: 'incident', tenant: claim.tenant, key: claim.key }, now);
    const entry = outboxEntries.incident(claim, result.outcome.kind, result.record, now);
    if (entry) this.outbox.push(entry);
    return { outcome: result.outcome, record: { ...result.record } };
  }

  async get(tenant: string, key: string) {
    this.assertOpen();
    const rec = this.live(tenant, key, this.clock.now());
    if (!rec) return null;
    return this.acks.get(memoryId(tenant, key)) === rec.createdAt ? { ...rec, acknowledged: true as const } : { ...rec };
  }

  async close(tenant: string, key: string, resolvedAt?: number, _origin?: Origin, episode?: number) {
    this.assertOpen();
    const now = this.clock.now();
    const id = memoryId(tenant, key);
    if (episode !== undefined && this.records.get(id)?.createdAt !== episode) return null;
    if (resolvedAt !== undefined) {
      const old = this.resolutions.get(id);
      this.resolutions.set(id, { endedAt: Math.max(resolvedAt, old && old.until > now ? old.endedAt : resolvedAt), until: now + RESOLUTION_MEMORY_MS });
    }
    const live = this.live(tenant, key, now);
    this.records.delete(id);
    this.acks.delete(id);
    if (live) this.outbox.push(outboxEntries.close(live, now));
    return live ? { ...live } : null;
  }

  async acknowledge(tenant: string, key: string, _origin?: Origin, episode?: number): Promise<AckOutcome> {
    this.assertOpen();
    const now = this.clock.now();
    const live = this.live(tenant, key, now);
    if (!live || (episode !== undefined && live.createdAt !== episode)) return 'absent';
    const id = memoryId(tenant, key);
    if (this.acks.get(id) === live.createdAt) return 'repeat';
    this.acks.set(id, live.createdAt);
    this.outbox.push(outboxEntries.acknowledged(live, now));
    return 'acknowledged';
  }

  async escalate(tenant: string, key: string, s: EscalationStep): Promise<EscalateOutcome> {
    this.assertOpen();
    const now = this.clock.now();
    const live = this.live(tenant, key, now);
    if (!live || live.createdAt !== s.episode) return 'absent';
    const id = memoryId(tenant, key);
    if (this.acks.get(id) === live.createdAt) return 'acknowledged';
    const was = this.escalations.get(id);
    if (was?.episode === s.episode && was.step >= s.step) return 'done';
    if (now < s.dueAt) return 'early';
    this.escalations.set(id, { episode: s.episode, step: s.step });
    const route = joinRoute(live.route, s.to);
    if (route) live.route = route;
    this.outbox.push(outboxEntries.escalated(tenant, key, s, now));
    return 'escalated';
  }

  /** Records expired past the grace (with their acknowledgement) and forgotten resolutions, at most `batch`. */
  sweep(batch: number): number {
    const now = this.clock.now();
    sweepMap(this.resolutions, batch, (r) => r.until <= now);
    return sweepMap(
      this.records,
      batch,
      (rec) => rec.expiresAt + this.expiredGraceMs <= now,
      (id) => {
        this.acks.delete(id);
        this.escalations.delete(id);
      },
    );
  }
}
