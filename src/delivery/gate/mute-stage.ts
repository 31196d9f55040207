import { labelsOf } from '../../inputs/labels.js';
import type { MuteSource } from '../../mute/mutes.js';
import type { GateStage } from './stage.js';

/**
 * Mutes (silences, maintenance windows, inhibition), looked at when the
 * delivery is leased, so a silence made after the decision still holds it.
 * A muted delivery is folded and held, neither sent nor counted as a retry.
 * A mute never holds a close: a close is at the head of its line only once
 * its create went out, and then it goes.
 */
export const muteStage = (source: MuteSource, now: () => number): GateStage => ({
  name: 'mute',
  async pass(g, ctx) {
    const { d } = g;
    if (d.entry.action === 'close') return g;
    const muted = await source.mutedBy(d.entry.tenant, labelsOf(d.entry), now(), d.entry.key);
    if (!muted) return g;
    const r = await ctx.store.fold(d, ctx.recheckMs);
    ctx.observer.held?.(d, muted, r.kind, d.held !== true);
    return null;
  },
});
