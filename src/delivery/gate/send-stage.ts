import { deliveryIdentity } from '../identity.js';
import type { GateStage } from './stage.js';

/**
 * The last stage of a destination's line: calls its adapter with the
 * delivery's idempotency key (the same for every retry) and settles it by
 * the answer. An entry the adapter does not take (another kind, a violation
 * that does not page) is settled as skipped.
 */
export const sendStage = (): GateStage => ({
  name: 'send',
  async pass(g, ctx) {
    const { d, adapter } = g;
    if (!adapter) return g;
    if (!adapter.accepts(d.entry)) {
      await ctx.settle(g, 'skipped');
      return null;
    }
    // The stages before this one may have taken long (store round trips on a loaded host): the lease is
    // looked at again here, right before the call, not only when the worker took the delivery up.
    if (!(await ctx.holdLease(g, adapter.timeoutMs ?? 0))) return null;
    ctx.observer.attempted?.(d.adapter);
    const r = await adapter.deliver({
      entry: d.entry,
      idempotencyKey: `${deliveryIdentity(d.entry.tenant, d.entry.key)}:${d.entry.action}:${d.n}`,
      attempt: d.retries + 1,
    });
    await ctx.settle(g, r);
    return null;
  },
});
