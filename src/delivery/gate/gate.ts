import type { Delivery } from '../../store/contract/index.js';
import type { Adapter } from '../adapter.js';
import type { GateContext, GateStage, InGate } from './stage.js';

/**
 * The stages every leased delivery passes, in order: mute, hold, fold, then
 * the last stages that settle it (group, send). The first stage that answers
 * null is the last to run.
 */
export class DeliveryGate {
  constructor(
    readonly stages: readonly GateStage[],
    private readonly ctx: GateContext,
  ) {}

  /** Runs the delivery through the stages; answers the delivery as it left the last one, or null when a stage kept it. */
  async pass(d: Delivery, adapter: Adapter | undefined, started: number, lease: { at: number }): Promise<Delivery | null> {
    let g: InGate | null = { d, mark: null, started, lease, ...(adapter ? { adapter } : {}) };
    for (const stage of this.stages) {
      g = await stage.pass(g, this.ctx);
      if (!g) return null;
    }
    return g.d;
  }

  /** The own lines the stages settle now: fanned out with the adapters. */
  lines(): string[] {
    return this.stages.flatMap((s) => s.lines?.() ?? []);
  }
}
