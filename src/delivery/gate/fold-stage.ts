import type { GateStage } from './stage.js';

/**
 * Folds what queued up behind the delivery into it, where that is what
 * goes out:
 * - a delivery a mute or hold let go (held before, or marked as a flapping
 *   key's settled state): it carries the key's last state, and what queued
 *   behind it goes with it;
 * - a group's update: each says the whole group's state, so the updates
 *   queued behind a slow or failing destination go as one, the last. A close
 *   behind them goes next instead (superseded).
 * The mark is merged into the data of what goes.
 */
export const foldStage = (): GateStage => ({
  name: 'fold',
  async pass(g, ctx) {
    const released = Boolean(g.d.held || g.mark);
    let out = g.d;
    if (released || (out.entry.kind === 'group' && out.entry.action === 'update')) {
      const r = await ctx.store.fold(out, null);
      if (released) ctx.observer.released?.(out, r.kind);
      if (r.kind !== 'ready') return null;
      out = r.delivery;
    }
    return { ...g, d: g.mark ? { ...out, entry: { ...out.entry, data: { ...out.entry.data, ...g.mark } } } : out, mark: null };
  },
});
