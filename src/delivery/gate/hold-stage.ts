import type { HoldSource } from '../../mute/holds.js';
import type { GateStage } from './stage.js';

/**
 * Holds (auto-pause, flapping, a group's wait): each holds until a time of
 * its own; flapping holds closes too, and marks the state it finally lets
 * out (carried to the fold stage in the delivery's mark).
 */
export const holdStage = (holds: HoldSource, clock: () => number): GateStage => ({
  name: 'hold',
  async pass(g, ctx) {
    const now = clock();
    const v = await holds.verdict(g.d, now);
    if (v && 'hold' in v) {
      // Looked at again when the hold ends, or sooner: a store on its own clock (Redis) and a
      // hold's end moved by a new transition are both caught within a recheck.
      const r = await ctx.store.fold(g.d, Math.max(1, Math.min(v.hold.until - now, ctx.recheckMs)));
      ctx.observer.held?.(g.d, v.hold, r.kind, g.d.held !== true);
      return null;
    }
    return v?.mark ? { ...g, mark: { ...(g.mark ?? {}), ...v.mark } } : g;
  },
});
