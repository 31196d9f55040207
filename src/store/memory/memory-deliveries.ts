import { randomUUID } from 'node:crypto';
import type { Clock } from '../../core/clock.js';
import { routedLines, type OutboxEntry } from '../../core/outbox.js';
import { sweepMap } from './sweep.js';
import {
  COUNTER_MEMORY_MS,
  isFailing,
  SWEEP_BATCH,
  withAttempt,
  type Delivery,
  type DeliveryBacklog,
  type DeliveryScope,
  type DeliveryStore,
  type FoldOutcome,
  foldPlan,
  type Settlement,
} from '../contract/index.js';

interface Row extends Delivery {
  dueAt: number;
  /** fan-out order: of one key's deliveries to one adapter, only the oldest unsettled goes out */
  seq: number;
  /** its line: the rows of its key to its adapter, oldest first, and the line's key in `lines` */
  line: Row[];
  lineKey: string;
  /** ms, the receiver's Retry-After floor: a re-queue makes it due no sooner */
  notBefore?: number;
}

const scopeOf = (s: DeliveryScope) => `${s.kind}\u0000${s.tenant}\u0000${s.key}`;

/** Delivery state for the memory store; every method runs to completion synchronously (its atomic step). */
export class MemoryDeliveries implements DeliveryStore {
  private readonly rows = new Map<string, Row>();
  /**
   * One key's deliveries to one adapter (a line), in fan-out order: they go
   * out one at a time, oldest first. The worker's calls read a line's head or
   * the rows behind it here, not in a pass over every row: a pass per fold
   * made draining a backlog quadratic (4,000 deliveries took 1.6 s, 20,000
   * would take about 40).
   */
  private readonly lines = new Map<string, Row[]>();
  /**
   * The failing rows (`isFailing`) by scope: what a re-fire re-queues, found
   * without a pass over every row. Kept where a row starts failing (settle)
   * and stops (re-queued, or gone).
   */
  private readonly failing = new Map<string, Set<Row>>();
  /** the `n` of each (scope, action), and when it was last used */
  private readonly counters = new Map<string, { n: number; usedAt: number }>();
  private nextId = 1;

  constructor(
    private readonly clock: Clock,
    private readonly outbox: OutboxEntry[],
  ) {}

  async fanOut(adapters: readonly string[], limit: number) {
    const now = this.clock.now();
    const taken = this.outbox.splice(0, limit);
    for (const entry of taken) {
      const lines = routedLines(adapters, entry.route);
      // Nothing receives it (no adapter, or none on its route): nothing is kept for it, not even its count.
      if (lines.length === 0) continue;
      const scope = scopeOf(entry);
      const c = `${scope}\u0000${entry.action}`;
      const n = (this.counters.get(c)?.n ?? 0) + 1;
      this.counters.set(c, { n, usedAt: now });
      const base = this.nextId++;
      for (const adapter of lines) {
        const id = `${base}.${adapter}`;
        const lineKey = `${adapter}\u0000${scope}`;
        let line = this.lines.get(lineKey);
        if (!line) this.lines.set(lineKey, (line = []));
        const row: Row = { id, adapter, entry, n, retries: 0, attempts: [], status: 'pending', lease: '', dueAt: now, seq: base, line, lineKey };
        // seq grows with every fan-out, so a push keeps the line oldest first.
        line.push(row);
        this.rows.set(id, row);
      }
    }
    return taken.length;
  }

  /**
   * When the next delivery that heads its line falls due (ms), or null when
   * none waits: a simulation moves its clock straight there (not part of the
   * contract; only this store is simulated on).
   */
  nextDueAt(): number | null {
    let next: number | null = null;
    for (const [r] of this.lines.values()) if (r!.status === 'pending' && (next === null || r!.dueAt < next)) next = r!.dueAt;
    return next;
  }

  async leaseDue(owner: string, leaseMs: number, limit: number) {
    const now = this.clock.now();
    const token = `${owner}:${randomUUID()}`;
    // Two calls in flight for one key would both find no ticket and both create one: per key and adapter, oldest
    // first, so only a line's head goes. A dead letter keeps its place: what comes after it waits until it is
    // retried or dropped.
    const due: Row[] = [];
    for (const [r] of this.lines.values()) if (r!.status === 'pending' && r!.dueAt <= now) due.push(r!);
    due.sort((a, b) => a.dueAt - b.dueAt || a.seq - b.seq).splice(limit);
    return due.map((r) => {
      r.dueAt = now + leaseMs;
      r.lease = token;
      return copy(r);
    });
  }

  async fold(d: Delivery, holdMs: number | null): Promise<FoldOutcome> {
    const head = this.rows.get(d.id);
    if (!head || head.lease !== d.lease || head.status !== 'pending') return { kind: 'lost' };
    const younger = head.line.slice(head.line.indexOf(head) + 1).filter((r) => r.status === 'pending');
    const plan = foldPlan(
      head.entry.action,
      younger.map((r) => r.entry.action),
      head.attempts.length > 0,
    );
    for (const r of younger.slice(0, plan.drop)) this.forget(r);
    if (plan.outcome !== 'folded') {
      this.forget(head);
      // The close now heads the line: due at once.
      if (plan.outcome === 'superseded') younger[plan.drop]!.dueAt = this.clock.now();
      return { kind: plan.outcome, folded: plan.drop };
    }
    if (plan.latest !== null) {
      const { severity, summary, data, at } = younger[plan.latest]!.entry;
      head.entry = { ...head.entry, severity, summary, data, at };
    }
    if (holdMs === null) {
      head.held = false;
      return { kind: 'ready', delivery: copy(head), folded: plan.drop };
    }
    head.held = true;
    head.lease = '';
    head.dueAt = this.clock.now() + holdMs;
    return { kind: 'held', folded: plan.drop };
  }

  async renew(d: Delivery, leaseMs: number) {
    const r = this.rows.get(d.id);
    if (!r || r.lease !== d.lease || r.status !== 'pending') return false;
    r.dueAt = this.clock.now() + leaseMs;
    return true;
  }

  async settle(d: Delivery, s: Settlement) {
    const r = this.rows.get(d.id);
    if (!r || r.lease !== d.lease || r.status !== 'pending') return false;
    const now = this.clock.now();
    r.lease = '';
    if (s.outcome === 'delivered') {
      this.forget(r);
      return true;
    }
    r.attempts = withAttempt(r.attempts, now, s.error);
    r.retries++;
    if (s.outcome === 'retry') {
      r.dueAt = now + s.delayMs;
      if (s.floorMs !== undefined) r.notBefore = Math.max(r.notBefore ?? 0, now + s.floorMs);
    } else {
      r.status = 'dead';
      r.deadAt = now;
    }
    const scope = scopeOf(r.entry);
    let set = this.failing.get(scope);
    if (!set) this.failing.set(scope, (set = new Set()));
    set.add(r);
    return true;
  }

  async deadLetters(tenant: string | null, limit: number) {
    const dead = [...this.rows.values()]
      .filter((r) => r.status === 'dead' && (tenant === null || r.entry.tenant === tenant))
      .sort((a, b) => a.deadAt! - b.deadAt!)
      .slice(0, limit);
    // What waits behind each: the rows after it in its line.
    return dead.map((r) => ({ ...copy(r), waiting: r.line.length - 1 - r.line.indexOf(r) }));
  }

  async dropDeadLetter(tenant: string | null, id: string) {
    const r = this.rows.get(id);
    if (r?.status !== 'dead' || (tenant !== null && r.entry.tenant !== tenant)) return false;
    this.forget(r);
    return true;
  }

  async retryDeadLetter(tenant: string | null, id: string) {
    const r = this.rows.get(id);
    if (r?.status !== 'dead' || (tenant !== null && r.entry.tenant !== tenant)) return false;
    this.requeue(r, this.clock.now());
    return true;
  }

  /** Part of a claim's atomic step: failing deliveries of the scope, not leased now, are due again. */
  requeueFailing(scope: DeliveryScope, now: number): number {
    const failing = this.failing.get(scopeOf(scope));
    if (!failing) return 0;
    let n = 0;
    // A Set iterates safely while requeue removes the row it is on.
    for (const r of failing) {
      if (r.lease === '' || r.dueAt <= now) {
        this.requeue(r, now);
        n++;
      }
    }
    return n;
  }

  private requeue(r: Row, now: number) {
    this.recovered(r);
    r.status = 'pending';
    r.retries = 0;
    r.dueAt = Math.max(now, r.notBefore ?? 0);
    r.lease = '';
    delete r.deadAt;
  }

  /** A row gone (delivered, dropped, folded away or swept). */
  private forget(r: Row) {
    this.rows.delete(r.id);
    this.unline(r);
    if (isFailing(r)) this.recovered(r);
  }

  /** A row out of its line; a line left empty goes. Rows leave mostly from the head, so the search is short. */
  private unline(r: Row) {
    const at = r.line.indexOf(r);
    if (at >= 0) r.line.splice(at, 1);
    if (r.line.length === 0 && this.lines.get(r.lineKey) === r.line) this.lines.delete(r.lineKey);
  }

  /** A row no longer failing, out of the index. */
  private recovered(r: Row) {
    const scope = scopeOf(r.entry);
    const set = this.failing.get(scope);
    if (set?.delete(r) && set.size === 0) this.failing.delete(scope);
  }

  async sweepDeadLetters(retentionMs: number) {
    const before = this.clock.now() - retentionMs;
    return sweepMap(
      this.rows,
      SWEEP_BATCH,
      (r) => r.status === 'dead' && r.deadAt! <= before,
      (_id, r) => {
        this.unline(r);
        this.recovered(r);
      },
    );
  }

  /** Counters unused for COUNTER_MEMORY_MS, at most `batch`. */
  sweep(batch: number): number {
    const until = this.clock.now() - COUNTER_MEMORY_MS;
    return sweepMap(this.counters, batch, (c) => c.usedAt <= until);
  }

  async backlog(): Promise<DeliveryBacklog> {
    let pending = 0;
    let dead = 0;
    let held = 0;
    let oldestAt: number | null = this.outbox[0]?.at ?? null;
    for (const r of this.rows.values()) {
      if (r.status === 'dead') dead++;
      else {
        pending++;
        if (r.held) held++;
        else if (oldestAt === null || r.entry.at < oldestAt) oldestAt = r.entry.at;
      }
    }
    return { pending, dead, oldestAt, held };
  }
}

function copy(r: Row): Delivery {
  const { dueAt: _, seq: __, line: ___, lineKey: ____, notBefore: _____, held, ...d } = r;
  return { ...d, ...(held ? { held } : {}), entry: { ...d.entry, data: { ...d.entry.data } }, attempts: [...d.attempts] };
}
