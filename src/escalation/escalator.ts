import type { Config } from '../config/schema.js';
import type { Clock } from '../core/clock.js';
import type { OutboxEntry } from '../core/outbox.js';
import { escalationOf, routeEscalates } from '../delivery/routing.js';
import type { EscalationSink, EscalationWait } from '../delivery/gate/escalate-stage.js';
import type { HistoryRecorder } from '../history/recorder.js';
import type { IncidentStore } from '../store/contract/index.js';

/**
 * The least a waiting escalation sleeps before it looks again: a store on its
 * own clock (Redis) may answer "not yet" to a replica whose clock runs ahead.
 */
const MIN_WAIT_MS = 1000;

/** An entry's data without the step mark a step's folded create left on it. */
function withoutStep(data: Record<string, unknown>): Record<string, unknown> {
  const { escalation: _, ...rest } = data;
  return rest;
}

/**
 * Escalation when nobody acknowledges. Every incident's create reaches the
 * escalation line (gate/escalate-stage.ts) like a change reaches an adapter:
 * durable, retried, one replica at a time. For a key whose route escalates,
 * this writes each step whose time has come through the store's `escalate`
 * (one atomic step that refuses after an acknowledgement or a close, and a
 * step written before), and says how long the line waits for the next one.
 * Step n is due the sum of the first n `after`s past the key's create.
 */
export class Escalator implements EscalationSink {
  constructor(
    private readonly o: {
      incidents: Pick<IncidentStore, 'get' | 'escalate'>;
      config: () => Config;
      clock: Clock;
      /** where each step written is told (the key's history) */
      history?: Pick<HistoryRecorder, 'record'>;
    },
  ) {}

  /** Whether anything escalates under the config in force (the line exists only then). */
  active(): boolean {
    return routeEscalates(this.o.config());
  }

  async advance(e: OutboxEntry): Promise<EscalationWait | null> {
    // A step's own create (marked with its step) reaches this line too, behind the waiting create of its
    // key, and folds into it: the steps are read from the store's record of the episode, not the entry.
    if (e.kind !== 'incident' || e.action !== 'create') return null;
    const steps = escalationOf(this.o.config(), e.tenant, e);
    if (steps.length === 0) return null;
    const rec = await this.o.incidents.get(e.tenant, e.key);
    // Closed, acknowledged, or live again in a later episode (whose own create escalates it).
    if (!rec || rec.acknowledged || rec.createdAt > e.at) return null;
    let dueAt = rec.createdAt;
    for (const [i, step] of steps.entries()) {
      dueAt += step.afterMs;
      const outcome = await this.o.incidents.escalate(e.tenant, e.key, {
        episode: rec.createdAt,
        step: i + 1,
        dueAt,
        to: step.to,
        severity: e.severity,
        summary: e.summary,
        data: withoutStep(e.data),
      });
      if (outcome === 'escalated') this.o.history?.record(e.tenant, e.key, { type: 'escalated', step: i + 1, adapters: [...step.to] });
      if (outcome === 'early') return { step: i + 1, dueAt, waitMs: Math.max(MIN_WAIT_MS, dueAt - this.o.clock.now()) };
      if (outcome !== 'escalated' && outcome !== 'done') return null;
    }
    return null;
  }

  /** In the key's history: the escalation waits for its next step (the line's own holds leave no event). */
  waiting(e: OutboxEntry, wait: EscalationWait): void {
    this.o.history?.record(e.tenant, e.key, { type: 'held', by: 'escalation', id: e.key, step: wait.step, until: wait.dueAt });
  }
}
