import type { Delivery, DeliveryStore } from '../../store/contract/index.js';
import type { Adapter, AdapterResult } from '../adapter.js';
import type { DeliveryObserver } from '../observer.js';

/**
 * One delivery on its way through the gate: what it is now, the adapter its
 * line is for (undefined on onceonly's own lines, such as the group line),
 * and the mark a hold asked to be merged into its data when it goes (a
 * flapping key's settled state).
 */
export interface InGate {
  d: Delivery;
  mark: Record<string, unknown> | null;
  adapter?: Adapter;
  /** when the worker took it up (performance.now()): the settled metric's duration */
  started: number;
  /** when its lease was taken or last renewed, on the worker's monotonic clock (shared by every copy on its way) */
  lease: { at: number };
}

/** What every stage may use: the delivery store (to fold and hold), the observer, and the settling of a delivery. */
export interface GateContext {
  store: DeliveryStore;
  observer: DeliveryObserver;
  /** how long a held delivery waits before the stages look at it again, at most */
  recheckMs: number;
  /**
   * Settles a delivery by what its call answered: delivered; retried after
   * the backoff while the retry budget lasts; else a dead letter. `skipped`:
   * the entry is not for this line, which is done with it. Reports the
   * outcome; never throws.
   */
  settle(g: InGate, result: AdapterResult | 'skipped'): Promise<void>;
  /**
   * Whether the delivery's lease lasts a call of `callMs` from now, renewing
   * it first when what is left is too short. False when the lease ran out or
   * another worker took it (reported): the caller makes no call, since a
   * call now could land after that worker's newer one.
   */
  holdLease(g: InGate, callMs: number): Promise<boolean>;
}

/**
 * A step of the delivery gate, in the spirit of Alertmanager's notify
 * pipeline. A stage answers the delivery to pass on (changed or not), or
 * null when it is done with it: held, folded or dropped (nothing is sent
 * now), or settled by a last stage (sent, or applied to its group). Nothing
 * after a null runs.
 */
export interface GateStage {
  readonly name: string;
  /**
   * onceonly's own lines this stage settles (the group line while grouping
   * is configured): fanned out beside the adapters, and kept, not parked as
   * "no longer configured".
   */
  lines?(): readonly string[];
  pass(g: InGate, ctx: GateContext): Promise<InGate | null>;
}
