import type { Clock } from '../../core/clock.js';
import type { DedupStore, IncidentClaim, IncidentDecisionResult, OutboxPayload } from '../contract.js';
import type { DeviceEvent } from '../../core/event.js';
import type { ReconcileOutcome, SharedStore } from '../contract.js';
import { Journal } from './journal.js';
import { StoreTimeoutError, StoreUnavailableError, withTimeout } from './timeout.js';

export { StoreTimeoutError, StoreUnavailableError };
import type { WindowClaim } from '../delivery-contract.js';
import { FailOpenDeliveries } from './fail-open-deliveries.js';

export interface FailOpenEvents {
  /** The shared store stopped (true) or resumed (false) answering. */
  degraded?(degraded: boolean, cause?: unknown): void;
  reconciled?(outcome: ReconcileOutcome | 'expired'): void;
  error?(err: unknown, what: string): void;
}

export interface FailOpenOptions {
  /** A store call slower than this fails open (default 50 ms). */
  timeoutMs?: number;
  /** While degraded, how often the store is probed (default 250 ms). */
  probeIntervalMs?: number;
  /** Entries replayed per journal transaction. */
  batch?: number;
  events?: FailOpenEvents;
}

/**
 * Fail-open (seed 000: prefer a duplicate to a suppressed outage). When the
 * shared store is unreachable or slower than the timeout, the decision is made
 * in a local durable journal and answered as provisional at once; `ping`
 * (so /readyz) fails while degraded. A probe notices the store's return, and
 * the journal is replayed with an idempotent script: a key nobody else created
 * is claimed, a key another replica created meanwhile is merged (the
 * provisional CREATE was a duplicate, counted). Only when the journal is empty
 * do decisions go back to the shared store, so one key never has a journal
 * entry and a shared record that disagree about what was decided.
 */
export class FailOpenStore implements DedupStore {
  readonly kind: string;
  private degraded = false;
  private inflightJournalWrites = 0;
  private probe: NodeJS.Timeout | null = null;
  private replaying: Promise<void> | null = null;
  private closed = false;
  private readonly timeoutMs: number;
  private readonly probeMs: number;
  private readonly batch: number;
  private readonly events: FailOpenEvents;
  readonly deliveries: FailOpenDeliveries;

  constructor(
    readonly inner: SharedStore,
    readonly journal: Journal,
    private readonly clock: Clock,
    options: FailOpenOptions = {},
  ) {
    this.kind = inner.kind;
    this.timeoutMs = options.timeoutMs ?? 50;
    this.probeMs = options.probeIntervalMs ?? 250;
    this.batch = options.batch ?? 500;
    this.events = options.events ?? {};
    this.deliveries = new FailOpenDeliveries(inner.deliveries, journal.deliveries, () => this.degraded);
    // Entries left by an earlier run (an outage, then a crash) are replayed first.
    if (journal.size() > 0) this.degrade(new Error('journal holds entries from an earlier run'));
  }

  /** The shared store's audit trail, when it keeps one (Postgres in ledger mode). */
  get auditTrail() {
    return this.inner.auditTrail?.bind(this.inner);
  }

  /** Prepares the shared store (Postgres: migrations); it must answer for that. */
  async init(): Promise<void> {
    await this.inner.init?.();
  }

  get isDegraded(): boolean {
    return this.degraded;
  }

  decideIncident(claim: IncidentClaim): Promise<IncidentDecisionResult> {
    return this.sharedOrLocal(
      () => this.inner.decideIncident(claim),
      async () => {
        this.inflightJournalWrites++;
        try {
          return { ...(await this.journal.decideIncident(claim)), provisional: true };
        } finally {
          this.inflightJournalWrites--;
        }
      },
    );
  }

  getIncident(tenant: string, key: string) {
    return this.sharedOrLocal(
      () => this.inner.getIncident(tenant, key),
      async () => {
        const local = await this.journal.getIncident(tenant, key);
        if (local) return local;
        throw new StoreUnavailableError('the shared store is unreachable and this replica has no local record of the incident');
      },
    );
  }

  /**
   * A close must reach the shared store, or a later arrival would be
   * suppressed against a record that should be gone: while degraded it is
   * refused (503) and the caller retries.
   */
  closeIncident(tenant: string, key: string, resolvedAt?: number) {
    return this.shared('close the incident', () => this.inner.closeIncident(tenant, key, resolvedAt));
  }

  /** Like a close, an acknowledgement must reach the shared store: refused (503) while degraded. */
  acknowledgeIncident(tenant: string, key: string) {
    return this.shared('acknowledge the incident', () => this.inner.acknowledgeIncident(tenant, key));
  }

  /**
   * Device events are not decided provisionally: an event is acknowledged only
   * once applied in the shared store, so while it is unreachable they answer
   * 503 and the producer retries (its retry is then a duplicate or applied).
   */
  async applyEvent(event: DeviceEvent, retentionMs: number) {
    return this.shared('apply the event', () => this.inner.applyEvent(event, retentionMs));
  }

  /**
   * A violation is an alarm: like an incident it fails open, claimed in the
   * local journal. These claims are not replayed (they live one window): a
   * re-fire after the store returns, inside the same window, may alarm again.
   */
  claimWindow(tenant: string, key: string, ttlMs: number, outbox?: OutboxPayload): Promise<WindowClaim> {
    return this.sharedOrLocal(
      () => this.inner.claimWindow(tenant, key, ttlMs, outbox),
      () => this.journal.claimWindow(tenant, key, ttlMs, outbox),
    );
  }

  async getDevice(tenant: string, device: string) {
    return this.shared('read the device', () => this.inner.getDevice(tenant, device));
  }

  listDevices(tenant: string | null, limit: number) {
    return this.shared('list devices', () => this.inner.listDevices(tenant, limit));
  }

  countStaleDevices(observedBefore: number) {
    return this.inner.countStaleDevices(observedBefore);
  }

  /**
   * The shared store's outbox. Decisions made while degraded wrote their
   * entries to the journal's own outbox, read by `journal.listOutbox()`.
   */
  listOutbox() {
    return this.inner.listOutbox();
  }

  /** Asks the shared store within the timeout; when it fails, or is known to be down, answers locally. */
  private async sharedOrLocal<T>(shared: () => Promise<T>, local: () => Promise<T>): Promise<T> {
    if (!this.degraded) {
      try {
        return await withTimeout(shared(), this.timeoutMs);
      } catch (err) {
        this.degrade(err);
      }
    }
    return local();
  }

  /** Only the shared store will do: while it is unreachable the call is refused (503). */
  private async shared<T>(what: string, call: () => Promise<T>): Promise<T> {
    if (this.degraded) throw new StoreUnavailableError(`the shared store is unreachable; cannot ${what} now, retry`);
    try {
      return await withTimeout(call(), this.timeoutMs * 4);
    } catch (err) {
      this.degrade(err);
      throw new StoreUnavailableError(`the shared store did not answer; cannot ${what} now, retry: ${(err as Error).message}`);
    }
  }

  countLiveIncidents() {
    return this.inner.countLiveIncidents();
  }

  listIncidents(tenant: string, limit: number) {
    return this.shared('list incidents', () => this.inner.listIncidents(tenant, limit));
  }

  sweepExpired() {
    return this.inner.sweepExpired();
  }

  async ping() {
    if (this.degraded) {
      throw new StoreUnavailableError(`failing open: ${this.journal.size()} journaled decision(s) wait for the store`);
    }
    await withTimeout(this.inner.ping(), this.timeoutMs * 10);
  }

  async close() {
    this.closed = true;
    if (this.probe) clearInterval(this.probe);
    await this.replaying?.catch(() => {});
    await this.inner.close();
    await this.journal.close();
  }

  private degrade(cause: unknown): void {
    if (this.degraded || this.closed) return;
    this.degraded = true;
    this.events.degraded?.(true, cause);
    this.probe = setInterval(() => {
      this.replaying ??= this.tryRecover().finally(() => (this.replaying = null));
    }, this.probeMs);
    this.probe.unref();
  }

  /** Probe; when the store answers, replay the journal; when it is empty, switch back. */
  private async tryRecover(): Promise<void> {
    if (this.closed) return;
    try {
      await withTimeout(this.inner.ping(), this.timeoutMs * 10);
    } catch {
      return;
    }
    try {
      await this.replayParked();
      for (let rows = await this.journal.takeBatch(this.batch); rows.length > 0; rows = await this.journal.takeBatch(this.batch)) {
        await this.replayParked();
      }
    } catch (err) {
      this.events.error?.(err, 'journal replay');
      return;
    }
    // Synchronous from here: no journal write can slip in between the check and the switch.
    if (this.journal.size() === 0 && this.inflightJournalWrites === 0 && !this.closed) {
      this.degraded = false;
      if (this.probe) clearInterval(this.probe);
      this.probe = null;
      this.events.degraded?.(false);
    }
  }

  private async replayParked(): Promise<void> {
    const now = this.clock.now();
    for (const rec of this.journal.parked()) {
      if (rec.expiresAt <= now) {
        this.events.reconciled?.('expired');
      } else {
        const outcome = await withTimeout(
          this.inner.reconcileIncident(rec, rec.expiresAt - now, this.journal.entryId(rec)),
          this.timeoutMs * 10,
        );
        this.events.reconciled?.(outcome);
      }
      await this.journal.forget(rec);
    }
  }
}
