import type { Delivery, DeliveryStore } from '../../store/contract/index.js';
import type { DeliveryObserver } from '../worker.js';

/**
 * One delivery on its way through the gate: what it is now, and the mark a
 * hold asked to be merged into its data when it goes (a flapping key's
 * settled state).
 */
export interface InGate {
  d: Delivery;
  mark: Record<string, unknown> | null;
}

/** What every stage may use: the delivery store (to fold and hold) and the observer. */
export interface GateContext {
  store: DeliveryStore;
  observer: DeliveryObserver;
  /** how long a held delivery waits before the stages look at it again, at most */
  recheckMs: number;
}

/**
 * A step of the delivery gate, in the spirit of Alertmanager's notify
 * pipeline. A stage answers the delivery to pass on (changed or not), or
 * null when it held, folded or dropped it: then nothing after it runs and
 * nothing is sent now.
 */
export interface GateStage {
  readonly name: string;
  pass(g: InGate, ctx: GateContext): Promise<InGate | null>;
}
