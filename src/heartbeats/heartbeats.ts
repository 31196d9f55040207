import type { Config } from '../config/schema.js';
import { FOREVER_MS } from '../config/schema.js';
import type { HeartbeatConfig } from '../config/heartbeats.js';
import type { Clock } from '../core/clock.js';
import { incidentKey } from '../core/identity.js';
import { basisOf, type HeartbeatRecord, type HeartbeatStore } from '../store/contract/index.js';
import { DEFAULT_TENANT, type Deduplicator } from '../engine/deduplicator.js';

/** The identity of a missed heartbeat's incident: element_id is the heartbeat's name. */
export const HEARTBEAT_FAULT_CLASS = 'HEARTBEAT_MISSED';
export const HEARTBEAT_ROOT_CAUSE = 'heartbeat';

export const heartbeatIncidentKey = (name: string) =>
  incidentKey({ element_id: name, fault_class: HEARTBEAT_FAULT_CLASS, root_cause_id: HEARTBEAT_ROOT_CAUSE });

/** How often each replica looks for overdue heartbeats unless told otherwise. */
export const HEARTBEAT_CHECK_MS = 1000;
/**
 * How long a claimed miss may stay without its incident before another
 * replica opens it: the claiming replica decides right after its claim, and
 * on a loaded machine that can take seconds; a claim that stays unopened
 * this long belongs to a replica that died in between.
 */
export const UNOPENED_CLAIM_MS = 10_000;

export type HeartbeatState = 'ok' | 'missed' | 'never';

/** A heartbeat as GET /v1/heartbeats, the dashboard and the metrics show it. */
export interface HeartbeatStatus {
  name: string;
  /** ms, or null when never pinged */
  lastPingAt: number | null;
  state: HeartbeatState;
  /** ms: when it is (or was) missed without a ping */
  dueAt: number;
}

export interface HeartbeatObserver {
  /** What one check found, by tenant; a tenant the store could not answer for keeps what the check before found. */
  checked?(statuses: ReadonlyMap<string, HeartbeatStatus[]>): void;
  /** A replica claimed a miss and opened its incident; `decision` is what the decision said. */
  opened?(tenant: string, name: string, decision: string): void;
  /** A ping closed a missed heartbeat's incident. */
  recovered?(tenant: string, name: string): void;
  error?(err: unknown, what: string): void;
}

export interface HeartbeatMonitorOptions {
  store: HeartbeatStore;
  dedup: Deduplicator;
  config: () => Config;
  clock: Clock;
  checkMs?: number;
  observer?: HeartbeatObserver;
}

const periodMs = (h: HeartbeatConfig) => (h.interval_seconds + h.grace_seconds) * 1000;

/**
 * Dead-man's switches. Every replica runs one monitor; what they share is the
 * store's record of each heartbeat (its last ping, and the miss a replica
 * claimed), so the replicas agree without talking to each other:
 *
 * - a miss is claimed in one atomic step against the basis (last ping) the
 *   replica read, so of several replicas noticing it one opens the incident,
 *   and a replica that read before a ping claims nothing;
 * - the claim is kept until a ping's recovery closes the incident, so a
 *   restart during a miss neither forgets it nor opens a second one; a claim
 *   whose incident is not live (its replica died between the claim and the
 *   decision) is opened by any replica that has seen it so for
 *   UNOPENED_CLAIM_MS, never at once (the claimer may be deciding);
 * - the incident is an ordinary one (HEARTBEAT_MISSED, the heartbeat's name
 *   as element_id), delivered like any other, and lives until it is closed.
 */
export class HeartbeatMonitor {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private readonly observer: HeartbeatObserver;
  private found: ReadonlyMap<string, HeartbeatStatus[]> = new Map();
  /** Claims seen without their incident: tenant and name → the claim's basis and when this replica first saw it so. */
  private readonly unopened = new Map<string, { basis: number; since: number }>();

  constructor(private readonly o: HeartbeatMonitorOptions) {
    this.observer = o.observer ?? {};
  }

  /** The tenant's configured heartbeats. */
  configured(tenant: string): HeartbeatConfig[] {
    return this.o.config().heartbeats.filter((h) => (h.tenant ?? DEFAULT_TENANT) === tenant);
  }

  /** The tenant's heartbeats that an Alertmanager alert of this name pings. */
  pingedBy(tenant: string, alertname: string): HeartbeatConfig[] {
    return this.configured(tenant).filter((h) => h.alertname === alertname);
  }

  /** Records a ping and closes the incident of a miss it ends; null when the tenant has no heartbeat of that name. */
  async ping(tenant: string, name: string): Promise<HeartbeatStatus | null> {
    const hb = this.configured(tenant).find((h) => h.name === name);
    if (!hb) return null;
    const r = await this.o.store.ping(tenant, name, this.o.clock.now());
    if (r.missedBasis !== null) await this.recover(tenant, hb, r.missedBasis);
    return statusOf(hb, r, this.o.clock.now());
  }

  /** The tenant's configured heartbeats as they stand, by name. */
  async list(tenant: string): Promise<HeartbeatStatus[]> {
    const hbs = this.configured(tenant);
    if (hbs.length === 0) return [];
    const records = new Map((await this.o.store.list(tenant)).map((r) => [r.name, r]));
    const now = this.o.clock.now();
    return hbs.map((h) => statusOf(h, records.get(h.name), now)).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  /** One look at every configured heartbeat: enrol the new, open the missed, finish recoveries. */
  check(): Promise<void> {
    this.running ??= this.checkAll().finally(() => (this.running = null));
    return this.running;
  }

  private async checkAll(): Promise<void> {
    const byTenant = new Map<string, HeartbeatConfig[]>();
    for (const h of this.o.config().heartbeats) {
      const t = h.tenant ?? DEFAULT_TENANT;
      byTenant.set(t, [...(byTenant.get(t) ?? []), h]);
    }
    const found = new Map<string, HeartbeatStatus[]>();
    const before = this.found;
    for (const [tenant, hbs] of byTenant) {
      try {
        const records = new Map((await this.o.store.list(tenant)).map((r) => [r.name, r]));
        for (const h of hbs) await this.checkOne(tenant, h, records.get(h.name));
        const after = new Map((await this.o.store.list(tenant)).map((r) => [r.name, r]));
        const now = this.o.clock.now();
        found.set(
          tenant,
          hbs.map((h) => statusOf(h, after.get(h.name), now)),
        );
      } catch (err) {
        // The store cannot say now: the next check looks again; nothing was claimed that is not kept.
        this.observer.error?.(err, `checking the heartbeats of tenant ${tenant}`);
        const last = before.get(tenant);
        if (last) found.set(tenant, last);
      }
    }
    this.found = found;
    this.observer.checked?.(found);
  }

  private async checkOne(tenant: string, h: HeartbeatConfig, rec: HeartbeatRecord | undefined): Promise<void> {
    if (!rec) {
      await this.o.store.enroll(tenant, h.name, this.o.clock.now());
      return;
    }
    const basis = basisOf(rec);
    // Pinged since its miss was claimed, and the ping's close did not finish (a crash, a refused store).
    if (rec.missedBasis !== null && rec.missedBasis !== basis) await this.recover(tenant, h, rec.missedBasis);
    if (this.o.clock.now() < basis + periodMs(h)) return;
    const seen = `${tenant}\u0000${h.name}`;
    if (rec.missedBasis !== basis) {
      if (!(await this.o.store.claimMiss(tenant, h.name, basis))) return;
    } else if (await this.o.dedup.store.incidents.get(tenant, heartbeatIncidentKey(h.name))) {
      this.unopened.delete(seen);
      return; // claimed and open: the usual state of a missed heartbeat
    } else {
      // Claimed, not open: its replica may be deciding it this moment. Only a claim left so for a while is ours to open.
      const now = this.o.clock.now();
      const first = this.unopened.get(seen);
      if (first?.basis !== basis) this.unopened.set(seen, { basis, since: now });
      if (first?.basis !== basis || now - first.since < UNOPENED_CLAIM_MS) return;
    }
    this.unopened.delete(seen);
    await this.open(tenant, h, rec, basis);
  }

  private async open(tenant: string, h: HeartbeatConfig, rec: HeartbeatRecord, basis: number): Promise<void> {
    const last = rec.lastPingAt === null ? 'never pinged' : `last ping ${new Date(rec.lastPingAt).toISOString()}`;
    const d = await this.o.dedup.decideIncident(
      {
        element_id: h.name,
        fault_class: HEARTBEAT_FAULT_CLASS,
        root_cause_id: HEARTBEAT_ROOT_CAUSE,
        severity: h.severity,
        summary: `heartbeat ${h.name} missed: no ping for ${h.interval_seconds + h.grace_seconds} s (${last})`,
        details: {
          interval_seconds: h.interval_seconds,
          grace_seconds: h.grace_seconds,
          last_ping_at: rec.lastPingAt === null ? null : new Date(rec.lastPingAt).toISOString(),
        },
      },
      tenant,
      undefined,
      // It stays open until a ping (or a person) closes it, however long the silence lasts.
      { ttlMs: FOREVER_MS },
    );
    this.observer.opened?.(tenant, h.name, d.decision);
    // A ping between the claim and this decision found nothing to close: look again, and close it.
    const now = (await this.o.store.list(tenant)).find((r) => r.name === h.name);
    if (now && basisOf(now) !== basis) await this.o.dedup.closeKey(tenant, heartbeatIncidentKey(h.name));
  }

  /** A ping after a claimed miss: close its incident, then clear the claim (a failure in between leaves it for the next check). */
  private async recover(tenant: string, h: HeartbeatConfig, missedBasis: number): Promise<void> {
    await this.o.dedup.closeKey(tenant, heartbeatIncidentKey(h.name));
    await this.o.store.clearMiss(tenant, h.name, missedBasis);
    this.observer.recovered?.(tenant, h.name);
  }

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.check(), this.o.checkMs ?? HEARTBEAT_CHECK_MS);
    this.timer.unref();
    void this.check();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.running;
  }
}

/** Missed while a claimed miss of its basis stands or its deadline has passed; never while never pinged; else ok. */
export function statusOf(h: HeartbeatConfig, rec: HeartbeatRecord | undefined, now: number): HeartbeatStatus {
  if (!rec) return { name: h.name, lastPingAt: null, state: 'never', dueAt: now + periodMs(h) };
  const basis = basisOf(rec);
  const dueAt = basis + periodMs(h);
  const missed = rec.missedBasis === basis || now >= dueAt;
  return { name: h.name, lastPingAt: rec.lastPingAt, state: missed ? 'missed' : rec.lastPingAt === null ? 'never' : 'ok', dueAt };
}
