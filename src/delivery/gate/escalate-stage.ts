import type { OutboxEntry } from '../../core/outbox.js';
import { INTERNAL_PREFIX } from '../adapter.js';
import type { GateStage } from './stage.js';

/** The line incidents' creates reach their escalation by: fanned out like an adapter's, a name no config can give. */
export const ESCALATE_LINE = `${INTERNAL_PREFIX}escalate`;

/** What writes an incident's escalation steps as they fall due (escalation/escalator.ts). */
export interface EscalationSink {
  /** whether anything escalates now (the line exists only then) */
  active(): boolean;
  /** Writes the steps due; answers the next one and how long to wait for it, or null when none is left. Throws when the store could not. */
  advance(entry: OutboxEntry): Promise<EscalationWait | null>;
  /** The create now waits in the delivery store for that step (told once the wait is written). */
  waiting(entry: OutboxEntry, wait: EscalationWait): void;
}

/** The next step an escalation waits for: its number, when it is due (ms), and how long the line waits before it looks again. */
export interface EscalationWait {
  step: number;
  dueAt: number;
  waitMs: number;
}

/**
 * Escalation, as the last stage of the escalation line. While a route
 * escalates, every outbox entry is fanned out to this line too; a key's
 * create waits on it, held in the delivery store (so it outlives every
 * replica), until its next step is due, and is settled when no step is
 * left, or the key was acknowledged or closed. What queues behind the
 * create (its updates, its acknowledgement, its close) folds into it when it
 * comes due again, as on any line.
 */
export const escalateStage = (sink: EscalationSink | null): GateStage => ({
  name: 'escalate',
  lines: () => (sink?.active() ? [ESCALATE_LINE] : []),
  async pass(g, ctx) {
    if (g.d.adapter !== ESCALATE_LINE) return g;
    if (!sink?.active()) {
      await ctx.settle(g, 'skipped');
      return null;
    }
    ctx.observer.attempted?.(ESCALATE_LINE);
    try {
      const wait = await sink.advance(g.d.entry);
      if (wait === null) await ctx.settle(g, { ok: true, detail: 'escalation done' });
      else if ((await ctx.store.fold(g.d, wait.waitMs)).kind === 'held') sink.waiting(g.d.entry, wait);
    } catch (err) {
      await ctx.settle(g, { ok: false, retryable: true, reason: 'store', error: `escalation not written: ${(err as Error).message}` });
    }
    return null;
  },
});
