import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import type { Clock } from '../../core/clock.js';
import { type AckOutcome, DEFAULT_EXPIRED_GRACE_MS, isStale, nextIncidentRecord, RESOLUTION_MEMORY_MS, staleResult, type DedupStore, type IncidentClaim, type IncidentRecord } from '../contract.js';
import { GroupCommit } from './group-commit.js';
import { SCHEMA } from './schema.js';
import * as sql from './statements.js';
import * as ev from './event-statements.js';
import { decideEvent, DUPLICATE, gapSize, type DeviceEvent, type DeviceState } from '../../core/event.js';
import { outboxEntries, type DeviceSummary, type OutboxEntry, type OutboxPayload } from '../contract.js';
import type { WindowClaim } from '../delivery-contract.js';
import { SqliteDeliveries } from './sqlite-deliveries.js';

export type SqliteSynchronous = 'normal' | 'full';

export interface SqliteOptions {
  /**
   * `normal` (default): with WAL, survives a process crash; the last commits may be
   * lost on power loss. `full`: fsync on every commit, survives power loss too.
   */
  synchronous?: SqliteSynchronous;
  /** How long a writer waits for another process's write lock before failing. */
  busyTimeoutMs?: number;
  /** How long an expired, unclosed record is kept to detect premature expiry. */
  expiredGraceMs?: number;
}

const SWEEP_BATCH = 1000;

/**
 * The embedded durable store (better-sqlite3, WAL). Several processes may share
 * one file: every decision is a BEGIN IMMEDIATE transaction, so SQLite's write
 * lock serialises them.
 */
export class SqliteStore implements DedupStore {
  readonly kind = 'sqlite';
  protected readonly db: Database.Database;
  protected readonly writes: GroupCommit;
  private readonly stmt;
  private readonly expiredGraceMs: number;
  readonly deliveries: SqliteDeliveries;

  constructor(
    readonly path: string,
    private readonly clock: Clock,
    options: SqliteOptions = {},
  ) {
    if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
    this.expiredGraceMs = options.expiredGraceMs ?? DEFAULT_EXPIRED_GRACE_MS;
    this.db = new Database(path, { timeout: options.busyTimeoutMs ?? 5000 });
    this.db.pragma('journal_mode = WAL');
    this.db.pragma(`synchronous = ${(options.synchronous ?? 'normal').toUpperCase()}`);
    this.db.exec(SCHEMA);
    this.stmt = {
      select: this.db.prepare<[string, string], IncidentRecord>(sql.SELECT_INCIDENT),
      upsert: this.db.prepare<[IncidentRecord]>(sql.UPSERT_INCIDENT),
      delete: this.db.prepare<[string, string]>(sql.DELETE_INCIDENT),
      countLive: this.db.prepare<[number], { n: number }>(sql.COUNT_LIVE_INCIDENTS),
      sweep: this.db.prepare<[number, number]>(sql.SWEEP_EXPIRED_INCIDENTS),
      seen: this.db.prepare<[string, string, string, number, number]>(ev.SEEN),
      device: this.db.prepare<[string, string], DeviceState>(ev.DEVICE),
      listDevices: this.db.prepare<[{ tenant: string | null; limit: number }], DeviceSummary>(ev.LIST_DEVICES),
      addGaps: this.db.prepare<[string, string, number]>(ev.ADD_GAPS),
      bootSeen: this.db.prepare<[string, string, string]>(ev.BOOT_SEEN),
      upsertDevice: this.db.prepare<[DeviceState]>(ev.UPSERT_DEVICE),
      addBoot: this.db.prepare<[string, string, string]>(ev.ADD_BOOT),
      markSeen: this.db.prepare<[string, string, string, number, number]>(ev.MARK_SEEN),
      appendOutbox: this.db.prepare<[Omit<OutboxEntry, 'data'> & { data: string }]>(sql.APPEND_OUTBOX),
      countStale: this.db.prepare<[number], { n: number }>(ev.COUNT_STALE),
      listOutbox: this.db.prepare<[], Omit<OutboxEntry, 'data'> & { data: string }>(sql.LIST_OUTBOX),
      sweepSeen: this.db.prepare<[number, number]>(ev.SWEEP_SEEN),
      claimWindow: this.db.prepare<[string, string, number, number]>(sql.CLAIM_WINDOW),
      sweepWindows: this.db.prepare<[number, number]>(sql.SWEEP_WINDOWS),
      acknowledge: this.db.prepare<[string, string, number]>(sql.ACKNOWLEDGE),
      list: this.db.prepare<[string, number, number], IncidentRecord>(sql.LIST_INCIDENTS),
      deleteAck: this.db.prepare<[string, string]>(sql.DELETE_ACK),
      sweepAcks: this.db.prepare<[number]>(sql.SWEEP_ACKS),
      resolution: this.db.prepare<[string, string, number], { endedAt: number }>(sql.SELECT_RESOLUTION),
      recordResolution: this.db.prepare<[{ tenant: string; key: string; endedAt: number; expiresAt: number; now: number }]>(sql.RECORD_RESOLUTION),
      sweepResolutions: this.db.prepare<[number, number]>(sql.SWEEP_RESOLUTIONS),
    };
    this.writes = new GroupCommit(this.db);
    this.deliveries = new SqliteDeliveries(this.db, this.writes, clock);
  }


  decideIncident(claim: IncidentClaim) {
    return this.writes.submit(() => {
      const now = this.clock.now();
      const row = this.stmt.select.get(claim.tenant, claim.key);
      if (claim.episodeStartedAt !== undefined && isStale(claim, this.stmt.resolution.get(claim.tenant, claim.key, now)?.endedAt ?? null)) {
        return staleResult(row && row.expiresAt > now ? row : null, claim, now);
      }
      const existing = row && row.expiresAt + this.expiredGraceMs > now ? row : null;
      const result = nextIncidentRecord(existing, claim, now);
      this.stmt.upsert.run(result.record);
      // A re-fire gives the key's failing deliveries another go (seed 003), in this transaction.
      if (result.outcome.kind !== 'created') this.deliveries.requeueFailing({ kind: 'incident', tenant: claim.tenant, key: claim.key }, now);
      this.append(outboxEntries.incident(claim, result.outcome.kind, now));
      return result;
    });
  }

  applyEvent(e: DeviceEvent, retentionMs: number) {
    return this.writes.submit(() => {
      const now = this.clock.now();
      const s = this.stmt;
      if (s.seen.get(e.tenant, e.device, e.boot, e.sequence, now)) return DUPLICATE;
      const current = s.device.get(e.tenant, e.device) ?? null;
      const { result, next } = decideEvent(current, Boolean(s.bootSeen.get(e.tenant, e.device, e.boot)), e);
      if (next) {
        s.upsertDevice.run(next);
        s.addBoot.run(e.tenant, e.device, e.boot);
        s.markSeen.run(e.tenant, e.device, e.boot, e.sequence, now + retentionMs);
        if (result.transition) this.append(outboxEntries.transition(e, result.transition, now));
        if (result.gap) s.addGaps.run(e.tenant, e.device, gapSize(result.gap));
      }
      return result;
    });
  }

  /** One INSERT … ON CONFLICT … WHERE: the claim and the check are one statement; a repeat's re-queue is in the same transaction. */
  claimWindow(tenant: string, key: string, ttlMs: number, outbox?: OutboxPayload) {
    return this.writes.submit((): WindowClaim => {
      const now = this.clock.now();
      const claimed = this.stmt.claimWindow.run(tenant, key, now + ttlMs, now).changes === 1;
      if (!claimed) return this.deliveries.requeueFailing({ kind: 'violation', tenant, key }, now) > 0 ? 'requeued' : 'repeat';
      if (outbox) this.append(outboxEntries.violation(tenant, key, outbox, now));
      return 'claimed';
    });
  }

  async getDevice(tenant: string, device: string) {
    return this.stmt.device.get(tenant, device) ?? null;
  }

  async listDevices(tenant: string | null, limit: number) {
    return this.stmt.listDevices.all({ tenant, limit });
  }

  async countStaleDevices(observedBefore: number) {
    return this.stmt.countStale.get(observedBefore)?.n ?? 0;
  }

  async listOutbox(): Promise<OutboxEntry[]> {
    return this.stmt.listOutbox.all().map((r) => ({ ...r, data: JSON.parse(r.data) as Record<string, unknown> }));
  }

  /** Only ever called inside a write transaction (a GroupCommit batch). */
  private append(entry: OutboxEntry | null): void {
    if (entry) this.stmt.appendOutbox.run({ ...entry, data: JSON.stringify(entry.data) });
  }

  async getIncident(tenant: string, key: string) {
    const rec = this.stmt.select.get(tenant, key);
    return rec && rec.expiresAt > this.clock.now() ? rec : null;
  }

  closeIncident(tenant: string, key: string, resolvedAt?: number) {
    return this.writes.submit(() => {
      const now = this.clock.now();
      if (resolvedAt !== undefined) this.stmt.recordResolution.run({ tenant, key, endedAt: resolvedAt, expiresAt: now + RESOLUTION_MEMORY_MS, now });
      const row = this.stmt.select.get(tenant, key);
      this.stmt.delete.run(tenant, key);
      this.stmt.deleteAck.run(tenant, key);
      const live = row && row.expiresAt > now ? row : null;
      if (live) this.append(outboxEntries.close(live, now));
      return live;
    });
  }

  /** One INSERT … ON CONFLICT … WHERE marks the episode; the update entry is in the same transaction. */
  acknowledgeIncident(tenant: string, key: string) {
    return this.writes.submit((): AckOutcome => {
      const now = this.clock.now();
      const row = this.stmt.select.get(tenant, key);
      if (!row || row.expiresAt <= now) return 'absent';
      if (this.stmt.acknowledge.run(tenant, key, row.createdAt).changes === 0) return 'repeat';
      this.append(outboxEntries.acknowledged(row, now));
      return 'acknowledged';
    });
  }

  async listIncidents(tenant: string, limit: number) {
    return this.stmt.list.all(tenant, this.clock.now(), limit);
  }

  async countLiveIncidents() {
    return this.stmt.countLive.get(this.clock.now())?.n ?? 0;
  }

  sweepExpired() {
    return this.writes.submit(
      () =>
        this.stmt.sweep.run(this.clock.now() - this.expiredGraceMs, SWEEP_BATCH).changes +
        this.stmt.sweepSeen.run(this.clock.now(), SWEEP_BATCH).changes +
        this.stmt.sweepWindows.run(this.clock.now(), SWEEP_BATCH).changes +
        this.stmt.sweepAcks.run(SWEEP_BATCH).changes +
        this.stmt.sweepResolutions.run(this.clock.now(), SWEEP_BATCH).changes,
    );
  }

  async ping() {
    this.db.prepare('SELECT 1').get();
  }

  async close() {
    this.writes.flush();
    this.db.close();
  }
}
