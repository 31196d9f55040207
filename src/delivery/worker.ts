import { hostname } from 'node:os';
import type { MuteSource } from '../mute/mutes.js';
import type { HoldSource } from '../mute/holds.js';
import type { Delivery, DeliveryNear, DeliveryScope, DeliveryStore, Settlement } from '../store/contract/index.js';
import type { Adapter, AdapterResult } from './adapter.js';
import { backoffDelay, type BackoffPolicy } from './backoff.js';
import { DeliveryGate } from './gate/gate.js';
import { foldStage } from './gate/fold-stage.js';
import { floorStage, ReceiverFloors } from './gate/floor-stage.js';
import { holdStage } from './gate/hold-stage.js';
import { muteStage } from './gate/mute-stage.js';
import { escalateStage, type EscalationSink } from './gate/escalate-stage.js';
import { groupStage, type GroupSink } from './gate/group-stage.js';
import { sendStage } from './gate/send-stage.js';
import type { InGate } from './gate/stage.js';

export interface RetryPolicy extends BackoffPolicy {
  /** retries after the first attempt; then the delivery is a dead letter */
  maxRetries: number;
}

// What the worker reports lives in observer.ts (the gate's stages report through it too); said here as well for those who import the worker.
export type { DeliveryObserver, DeliveryOutcome, HeldBy, SettledDetail } from './observer.js';
import type { DeliveryObserver, DeliveryOutcome } from './observer.js';

/** How long a muted delivery is held before its mutes are looked at again. */
export const MUTE_RECHECK_MS = 1000;

export interface WorkerOptions {
  store: DeliveryStore;
  adapters: () => ReadonlyMap<string, Adapter>;
  policy: () => RetryPolicy;
  /** uniform in [0, 1): the backoff's jitter; injected so tests can pin it */
  random?: () => number;
  /** a worker's lease outlasts its slowest adapter call */
  leaseMs?: number;
  /** deliveries leased per pass */
  batch?: number;
  /** how long an idle worker waits before looking again */
  idleMs?: number;
  /** how soon after a nudge (this replica decided something to deliver) an idle worker looks, at the latest (default 10 ms) */
  nudgeMs?: number;
  observer?: DeliveryObserver;
  owner?: string;
  /** a monotonic clock, ms (performance.now): a paused process sees it jump */
  monotonic?: () => number;
  /** the clock the store's due times are on (ms): the receivers' Retry-After floors kept here use it too (default Date.now) */
  now?: () => number;
  /** What may mute a delivery (silences), and the clock its times are on; without it nothing is muted. */
  mutes?: { source: MuteSource; now: () => number; recheckMs?: number };
  /** Auto-pause and flapping: holds that end at a time of their own; on the mutes' clock. */
  holds?: HoldSource;
  /** What applies incidents' changes to their groups, while grouping is configured (null: it is not). */
  groups?: () => GroupSink | null;
  /** What writes incidents' escalation steps, while a route escalates (it says when). */
  escalation?: EscalationSink;
}

/** The default lease: a dead replica's deliveries fall due to another within this (delivery.lease_ms). */
export const DEFAULT_LEASE_MS = 15_000;
/** A call is started only with this much of its lease to spare beyond its timeout; otherwise the lease is renewed first. */
const RENEW_MARGIN_MS = 1000;

/** Keys a burst of nudges names at most; past it the pass after them looks everywhere. */
const MAX_NEAR = 256;

/**
 * The delivery worker: it fans new outbox entries out to the configured
 * adapters, leases due deliveries and calls their adapters in parallel (up to
 * `batch` in flight, leasing more as calls finish), then settles each:
 * delivered, retried after a capped jittered backoff (or the destination's
 * Retry-After, whichever is later), or parked as a dead letter. Every
 * replica runs one; leases keep them from delivering one delivery at once,
 * and upsert-by-key makes a repeat harmless.
 */
export class DeliveryWorker {
  private readonly owner: string;
  private readonly random: () => number;
  private readonly leaseMs: number;
  private readonly batch: number;
  private readonly idleMs: number;
  private readonly nudgeMs: number;
  /** A nudge's wake, set while one is pending: the nudges of one burst make one pass. */
  private nudged: NodeJS.Timeout | null = null;
  /** A nudge came while a pass ran (its entry may be after the pass's look): the next wait is nudgeMs, not idleMs. */
  private nudgedBusy = false;
  /** The keys the nudges since the last pass named, for the store to look near (DeliveryNear); null: a nudge named none, or too many did. */
  private near: DeliveryScope[] | null = [];
  private readonly observer: DeliveryObserver;
  private readonly monotonic: () => number;
  private running = false;
  private pass: Promise<number> | null = null;
  private timer: NodeJS.Timeout | null = null;
  private wake: (() => void) | null = null;
  /** Ends the wait for a nudge: the pass after it looks near the nudged keys. */
  private wakeByNudge: (() => void) | null = null;
  /** calls started and not yet settled, by runOnce or the loop */
  private readonly inflight = new Set<Promise<void>>();
  private filling: Promise<Array<Promise<void>>> | null = null;
  private freed: (() => void) | null = null;
  /** The stages a leased delivery passes before its adapter is called (gate/). */
  private readonly gate: DeliveryGate;
  /** The receivers' Retry-Afters, by line, for every row of the line (the journal's too). */
  private readonly floors: ReceiverFloors;

  constructor(private readonly o: WorkerOptions) {
    this.owner = o.owner ?? `${hostname()}:${process.pid}`;
    this.random = o.random ?? Math.random;
    this.leaseMs = o.leaseMs ?? DEFAULT_LEASE_MS;
    this.batch = o.batch ?? 128;
    this.idleMs = o.idleMs ?? 200;
    this.nudgeMs = Math.min(o.nudgeMs ?? 10, this.idleMs);
    this.observer = o.observer ?? {};
    this.monotonic = o.monotonic ?? (() => performance.now());
    this.floors = new ReceiverFloors(o.now ?? (() => Date.now()));
    const m = o.mutes;
    // Mute, then hold, then fold, then the last stages that settle: a hold's time needs the mutes'
    // clock, so holds come only with mutes. Every line passes them all, the group line included.
    this.gate = new DeliveryGate(
      [
        ...(m ? [muteStage(m.source, m.now)] : []),
        ...(m && o.holds ? [holdStage(o.holds, m.now)] : []),
        foldStage(),
        ...(o.groups ? [groupStage(o.groups)] : []),
        ...(o.escalation ? [escalateStage(o.escalation)] : []),
        floorStage(this.floors),
        sendStage(),
      ],
      {
        store: o.store,
        observer: this.observer,
        recheckMs: m?.recheckMs ?? MUTE_RECHECK_MS,
        settle: (g, result) => this.settle(g, result),
        holdLease: (g, callMs) => this.holdLease(g, callMs),
      },
    );
  }

  /** One pass: fan out, lease, deliver, settle. Returns how many deliveries it handled. */
  runOnce(): Promise<number> {
    this.pass ??= this.doPass().finally(() => (this.pass = null));
    return this.pass;
  }

  private async doPass(): Promise<number> {
    const started = await this.leaseAndStart(this.batch, undefined);
    await Promise.all(started);
    return started.length;
  }

  /** Fans out, leases up to `room` due deliveries (near the keys given, or anywhere) and starts their calls; returns the calls, not awaited. */
  private async leaseAndStart(room: number, near: DeliveryNear | undefined): Promise<Array<Promise<void>>> {
    const adapters = this.o.adapters();
    const lines = this.gate.lines();
    await this.o.store.fanOut([...adapters.keys(), ...lines], 1000, near);
    // Taken before the lease is asked for: the lease cannot have begun earlier.
    const leasedAt = this.monotonic();
    const due = await this.o.store.leaseDue(this.owner, this.leaseMs, room, near);
    if (due.length === 0 && this.inflight.size === 0) this.observer.idle?.();
    return due.map((d) => {
      const call = this.deliverOne(d, adapters, lines, leasedAt).finally(() => {
        this.inflight.delete(call);
        this.freed?.();
        // The line's next delivery (an update behind its create) may be due now: look near it soon.
        this.nudge({ kind: d.entry.kind, tenant: d.entry.tenant, key: d.entry.key });
      });
      this.inflight.add(call);
      return call;
    });
  }

  private async deliverOne(d: Delivery, adapters: ReadonlyMap<string, Adapter>, lines: readonly string[], leasedAt: number): Promise<void> {
    const started = performance.now();
    const lease = { at: leasedAt };
    const adapter = adapters.get(d.adapter);
    if (!adapter && !lines.includes(d.adapter)) {
      await this.settle(
        { d, mark: null, started, lease },
        { ok: false, retryable: false, reason: 'not_configured', error: `adapter ${JSON.stringify(d.adapter)} is no longer configured` },
      );
      return;
    }
    // Dropped at once when the lease is gone already; looked at again right before the call (the send stage).
    if (!(await this.holdLease({ d, mark: null, started, lease }, adapter?.timeoutMs ?? 0))) return;
    try {
      const unsettled = await this.gate.pass(d, adapter, started, lease);
      // Every line ends at a stage that settles it (send, group); one that passed them all would be
      // leased again and again, so it is parked, saying so, rather than left to loop.
      if (unsettled)
        await this.settle(
          { d: unsettled, mark: null, started, lease },
          { ok: false, retryable: false, reason: 'unsettled', error: `no stage settles line ${JSON.stringify(d.adapter)}` },
        );
    } catch (err) {
      // The lease runs out and the delivery falls due again: held or sent later, never lost.
      this.observer.error?.(err, `gating delivery ${d.id}`);
    }
  }

  /**
   * GateContext.holdLease. A worker that was paused (SIGSTOP, a VM freeze, a
   * long GC, a slow store under the stages) since its lease may find the
   * lease gone and another worker on it: a call now could land after that
   * worker's newer one. Its settle would be refused anyway (fencing); this
   * keeps the stale call from being made. Leases are short, so a dead
   * replica's deliveries are taken over within seconds: a call that could
   * outlast what is left of the lease renews it first, in the store and only
   * while it is still this worker's; the call (at most timeout_ms, shorter
   * than a lease) then ends inside it.
   */
  private async holdLease(g: InGate, callMs: number): Promise<boolean> {
    const seconds = () => ({ seconds: (performance.now() - g.started) / 1000 });
    const now = this.monotonic();
    if (now - g.lease.at >= this.leaseMs) {
      this.observer.settled?.(g.d, 'lost_lease', 'lease_expired_before_call', seconds());
      return false;
    }
    if (now - g.lease.at + callMs + RENEW_MARGIN_MS <= this.leaseMs) return true;
    if (!(await this.o.store.renew(g.d, this.leaseMs).catch(() => false))) {
      this.observer.settled?.(g.d, 'lost_lease', 'lease_lost_before_call', seconds());
      return false;
    }
    // Counted from before the renewal was asked for: the renewed lease cannot have begun earlier.
    g.lease.at = now;
    return true;
  }

  /** Settles a delivery by its call's answer (GateContext.settle); a store error leaves it to its lease. */
  private async settle(g: InGate, result: AdapterResult | 'skipped'): Promise<void> {
    const { d } = g;
    const [settlement, outcome, reason] = result === 'skipped' ? ([{ outcome: 'delivered' }, 'skipped', 'not_for_adapter'] as const) : this.judge(d, result);
    try {
      const settled = await this.o.store.settle(d, settlement);
      const delayMs = settlement.outcome === 'retry' ? settlement.delayMs : undefined;
      const error = settlement.outcome === 'delivered' ? undefined : settlement.error;
      const done = result !== 'skipped' && result.ok ? { done: result.detail, ticket: result.ticket } : {};
      this.observer.settled?.(d, settled ? outcome : 'lost_lease', reason, { delayMs, error, seconds: (performance.now() - g.started) / 1000, ...done });
    } catch (err) {
      // The lease runs out and the delivery falls due again: at least once, never lost.
      this.observer.error?.(err, `settling delivery ${d.id}`);
    }
  }

  /** The retry rules (docs/adapters.md): 2xx delivered; 408/429/5xx/network retried until the budget is spent; anything else dead. */
  private judge(d: Delivery, r: AdapterResult): [Settlement, DeliveryOutcome, string] {
    if (r.ok) return [{ outcome: 'delivered' }, 'delivered', 'ok'];
    if (!r.retryable) return [{ outcome: 'dead', error: r.error }, 'dead', r.reason];
    const p = this.o.policy();
    if (d.retries >= p.maxRetries) {
      return [{ outcome: 'dead', error: `retries exhausted (${p.maxRetries}): ${r.error}` }, 'dead', 'exhausted'];
    }
    const delayMs = Math.max(backoffDelay(d.retries, p, this.random), r.retryAfterMs ?? 0);
    // The receiver's Retry-After is kept as a floor: a re-fire's re-queue never sends before it.
    const floorMs = r.retryAfterMs !== undefined && r.retryAfterMs > 0 ? r.retryAfterMs : undefined;
    if (floorMs !== undefined) this.floors.note(d, floorMs);
    return [{ outcome: 'retry', delayMs, error: r.error, ...(floorMs !== undefined ? { floorMs } : {}) }, 'retried', r.reason];
  }

  /**
   * Runs passes until stopped: back to back while passes come back at least
   * half full (a backlog), else every idleMs. A trickle of decisions is thus
   * delivered in batches instead of costing a whole pass each (on Redis a pass
   * is two scripts per shard), which keeps the worker from competing with the
   * decisions for the store and the event loop.
   */
  start(): void {
    if (this.running) return;
    this.running = true;
    void this.loop();
  }

  /**
   * Keeps up to `batch` calls in flight: it leases more as room frees up
   * instead of waiting for a whole pass, so one slow or hanging destination
   * holds only its own calls, not every adapter's next deliveries.
   */
  private async loop(): Promise<void> {
    let byNudge = false;
    while (this.running) {
      const room = this.batch - this.inflight.size;
      let leased = 0;
      // A pass a nudge woke looks near the keys the nudges named; any other looks everywhere.
      const near = byNudge && this.near !== null && this.near.length > 0 ? this.near : undefined;
      this.near = [];
      byNudge = false;
      if (room > 0) {
        try {
          this.filling = this.leaseAndStart(room, near);
          leased = (await this.filling).length;
        } catch (err) {
          this.observer.error?.(err, 'delivery pass');
        } finally {
          this.filling = null;
        }
      }
      if (!this.running) break;
      // A backlog: go again at once while there is room. Otherwise wait for
      // the idle timer, a stop, or half the room coming free (a full worker
      // does not lease one delivery at a time).
      if (room >= this.batch / 2 && leased >= room / 2) continue;
      await new Promise<void>((resolve) => {
        this.wake = resolve;
        this.wakeByNudge = () => {
          byNudge = true;
          resolve();
        };
        // A full worker waits for half its room, then leases anywhere; one with room is woken by the nudges instead.
        this.freed =
          this.inflight.size > this.batch / 2
            ? () => {
                if (this.inflight.size <= this.batch / 2) resolve();
              }
            : null;
        const nudged = this.nudgedBusy;
        this.timer = setTimeout(
          () => {
            byNudge = nudged;
            resolve();
          },
          nudged ? this.nudgeMs : this.idleMs,
        );
        this.nudgedBusy = false;
        this.timer.unref();
      });
      this.wake = null;
      this.wakeByNudge = null;
      this.freed = null;
      if (this.timer) clearTimeout(this.timer);
    }
  }

  /**
   * This replica just wrote something to deliver (a decision's outbox
   * entry): an idle worker looks within nudgeMs instead of at the end of its
   * idle wait, so a trickle of alerts reaches its receivers in milliseconds.
   * Nudges coalesce: a burst of decisions makes one pass, not one each, so
   * the worker still does not compete with them for the store. A nudge
   * while a pass runs makes the wait after it nudgeMs long. A nudge names
   * the key decided, and the pass it wakes looks near the keys named
   * (DeliveryNear): on Redis only their shards, a few scripts instead of
   * two per shard; a nudge that names none makes that pass look everywhere.
   */
  nudge(near?: DeliveryScope): void {
    if (!this.running) return;
    // The keys to look near: a pass woken for a few keys visits only their shards on Redis.
    if (this.near !== null) {
      if (near === undefined || this.near.length >= MAX_NEAR) this.near = null;
      else this.near.push(near);
    }
    if (this.nudged) return;
    if (!this.wake) {
      this.nudgedBusy = true;
      return;
    }
    this.nudged = setTimeout(() => {
      this.nudged = null;
      this.wakeByNudge?.();
    }, this.nudgeMs);
    this.nudged.unref();
  }

  /** Stops leasing; resolves once every call in flight has been settled (SIGTERM drains). */
  async stop(): Promise<void> {
    this.running = false;
    if (this.timer) clearTimeout(this.timer);
    if (this.nudged) clearTimeout(this.nudged);
    this.wake?.();
    await this.filling?.catch(() => {});
    await this.pass?.catch(() => {});
    await Promise.all([...this.inflight]);
  }
}
