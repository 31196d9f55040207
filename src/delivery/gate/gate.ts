import type { Delivery } from '../../store/contract/index.js';
import type { GateContext, GateStage } from './stage.js';

/**
 * The stages every leased delivery passes before its adapter is called, in
 * order. The first stage that answers null stops it: held, folded or
 * dropped, and nothing is sent now.
 */
export class DeliveryGate {
  constructor(
    readonly stages: readonly GateStage[],
    private readonly ctx: GateContext,
  ) {}

  /** The delivery to make now, or null when there is none. */
  async pass(d: Delivery): Promise<Delivery | null> {
    let g: { d: Delivery; mark: Record<string, unknown> | null } | null = { d, mark: null };
    for (const stage of this.stages) {
      g = await stage.pass(g, this.ctx);
      if (!g) return null;
    }
    return g.d;
  }
}
