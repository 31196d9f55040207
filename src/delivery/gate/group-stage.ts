import type { OutboxEntry } from '../../core/outbox.js';
import { INTERNAL_PREFIX } from '../adapter.js';
import type { GateStage } from './stage.js';

/** The line incidents' changes reach their groups by: fanned out like an adapter's, a name no config can give. */
export const GROUP_LINE = `${INTERNAL_PREFIX}group`;

/** What moves a member into, within or out of its group (the engine's group applier); throws when it could not. */
export interface GroupSink {
  apply(entry: OutboxEntry): Promise<void>;
}

/**
 * Grouping, as the last stage of the group line. While grouping is
 * configured every outbox entry is fanned out to the group line too, so an
 * incident's change reaches its group the way a change reaches a
 * destination: durable, oldest first per key, retried until it lands, and
 * only once the mutes and holds before this stage let it through (a muted
 * member joins its group when nothing mutes it any more). The group's own
 * change is an outbox entry of its commit, and passes every stage again on
 * the destinations' lines. A change that landed and is retried finds the
 * group already so and writes nothing.
 */
export const groupStage = (sink: () => GroupSink | null): GateStage => ({
  name: 'group',
  lines: () => (sink() ? [GROUP_LINE] : []),
  async pass(g, ctx) {
    if (g.d.adapter !== GROUP_LINE) return g;
    const applier = sink();
    // Grouping was turned off after the lease (a reload): the line is gone, and so is this delivery.
    if (!applier || g.d.entry.kind !== 'incident') {
      await ctx.settle(g, 'skipped');
      return null;
    }
    ctx.observer.attempted?.(GROUP_LINE);
    try {
      await applier.apply(g.d.entry);
      await ctx.settle(g, { ok: true, detail: 'applied' });
    } catch (err) {
      await ctx.settle(g, { ok: false, retryable: true, reason: 'store', error: `group not updated: ${(err as Error).message}` });
    }
    return null;
  },
});
