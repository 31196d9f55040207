import { randomUUID } from 'node:crypto';
import { decodeRoute, routedLines, type OutboxAction, type OutboxEntry } from '../../core/outbox.js';
import {
  COUNTER_MEMORY_MS,
  SWEEP_BATCH,
  type Delivery,
  type DeliveryScope,
  type DeliveryStore,
  type FoldOutcome,
  foldPlan,
  triedRow,
  type Settlement,
  withAttempt,
} from '../contract/index.js';
import * as shared from '../sql/deliveries.js';
import type { SqliteDb } from './sqlite-db.js';

type Flat<T> = Omit<T, 'data'> & { data: string };
type Row = Flat<OutboxEntry> &
  Omit<Delivery, 'entry' | 'attempts' | 'deadAt' | 'held' | 'waiting'> & { attempts: string; deadAt: number | null; held: number; waiting?: number | null };

export function toDelivery(r: Row): Delivery {
  const { id, adapter, n, retries, attempts, status, lease, deadAt, tenant, kind, action, key, severity, summary, data, at } = r;
  return {
    id,
    adapter,
    n,
    retries,
    status,
    lease,
    attempts: JSON.parse(attempts) as Delivery['attempts'],
    entry: { tenant, kind, action, key, severity, summary, data: JSON.parse(data) as Record<string, unknown>, at },
    ...(deadAt === null ? {} : { deadAt }),
    ...(r.held ? { held: true } : {}),
    ...(r.waiting === undefined || r.waiting === null ? {} : { waiting: Number(r.waiting) }),
  };
}

const SEQ = (t: string) => `CAST(substr(${t}.id, 1, instr(${t}.id, '.') - 1) AS INTEGER)`;

/** SQLite's own: taking from the outbox, and the lease's pick. The rest is shared with Postgres (sql/deliveries.ts). */
export const SQL = {
  takeOutbox: `SELECT id, tenant, kind, action, key, severity, summary, data, at, route FROM outbox ORDER BY id LIMIT ?`,
  deleteOutbox: `DELETE FROM outbox WHERE id = ?`,
  /**
   * in: lease end, token, now, limit. One statement: the pick and the lease
   * cannot be split. Of one key's deliveries to one adapter only the oldest
   * unsettled one is picked: two calls in flight for one key would both find
   * no ticket and both create one. "Is there an older one" is one probe of
   * the deliveries_line index (migration 014), whose last column is SEQ.
   */
  leaseDue: `
UPDATE deliveries SET due_at = ?, lease = ?
 WHERE id IN (
   SELECT d.id FROM deliveries d
    WHERE d.status = 'pending' AND d.due_at <= ?
      AND NOT EXISTS (SELECT 1 FROM deliveries e
                       WHERE e.kind = d.kind AND e.tenant = d.tenant AND e.key = d.key AND e.adapter = d.adapter
                         AND ${SEQ('e')} < ${SEQ('d')})
    ORDER BY d.due_at LIMIT ?)
RETURNING ${shared.DELIVERY_COLUMNS}`,
};

/** Delivery state in the SQLite file; every write is one GroupCommit transaction. */
export class SqliteDeliveries implements DeliveryStore {
  private readonly s;

  constructor(private readonly x: SqliteDb) {
    const db = x.db;
    this.s = {
      take: db.prepare<[number], Omit<Flat<OutboxEntry>, 'route'> & { id: number; route: string | null }>(SQL.takeOutbox),
      deleteOutbox: db.prepare<[number]>(SQL.deleteOutbox),
      lease: db.prepare<[number, string, number, number], Row>(SQL.leaseDue),
      nextN: db.prepare<[DeliveryScope & { action: string; now: number }], { n: number }>(shared.NEXT_N),
      insert: db.prepare(shared.INSERT_DELIVERY),
      held: db.prepare<[{ id: string; lease: string }], Row>(shared.HELD),
      delete: db.prepare<[{ id: string }]>(shared.DELETE_DELIVERY),
      failed: db.prepare<[{ attempts: string; dueAt: number; status: string; deadAt: number | null; notBefore: number; id: string }]>(shared.FAILED),
      dead: db.prepare<[{ tenant: string | null; limit: number }], Row>(shared.deadLetters(SEQ)),
      dropDead: db.prepare<[{ id: string; tenant: string | null }]>(shared.DROP_DEAD),
      retryDead: db.prepare<[{ now: number; id: string; tenant: string | null }]>(shared.RETRY_DEAD),
      requeue: db.prepare<[{ now: number } & DeliveryScope]>(shared.REQUEUE_FAILING),
      renew: db.prepare<[{ id: string; lease: string; dueAt: number }]>(shared.RENEW),
      backlog: db.prepare<[], { pending: number; held: number; dead: number; outboxAt: number | null; pendingAt: number | null }>(shared.BACKLOG),
      sweepCounters: db.prepare<[{ before: number; batch: number }]>(shared.SWEEP_COUNTERS),
      sweepDead: db.prepare<[{ before: number; batch: number }]>(shared.SWEEP_DEAD),
      younger: db.prepare<[Record<string, unknown>], { id: string; action: OutboxAction }>(shared.youngerPending(SEQ)),
      takePayload: db.prepare<[{ id: string; from: string }]>(shared.TAKE_PAYLOAD),
      dueNow: db.prepare<[{ id: string; now: number }]>(shared.DUE_NOW),
      hold: db.prepare<[{ id: string; dueAt: number }]>(shared.HOLD),
      release: db.prepare<[{ id: string }]>(shared.RELEASE),
      one: db.prepare<[{ id: string }], Row>(`SELECT ${shared.DELIVERY_COLUMNS} FROM deliveries WHERE id = @id`),
    };
  }

  fanOut(adapters: readonly string[], limit: number) {
    return this.x.writes.submit(() => {
      const now = this.x.clock.now();
      const rows = this.s.take.all(limit);
      for (const { id: outboxId, route, ...e } of rows) {
        const lines = routedLines(adapters, decodeRoute(route));
        // Nothing receives it (no adapter, or none on its route): it is not counted, only taken.
        if (lines.length > 0) {
          const n = this.s.nextN.get({ kind: e.kind, tenant: e.tenant, key: e.key, action: e.action, now })!.n;
          for (const adapter of lines) this.s.insert.run({ ...e, id: `${outboxId}.${adapter}`, adapter, n, dueAt: now });
        }
        this.s.deleteOutbox.run(outboxId);
      }
      return rows.length;
    });
  }

  leaseDue(owner: string, leaseMs: number, limit: number) {
    return this.x.writes.submit(() => {
      const now = this.x.clock.now();
      return this.s.lease.all(now + leaseMs, `${owner}:${randomUUID()}`, now, limit).map(toDelivery);
    });
  }

  /** One transaction: the lease check, the fold and the hold or release. */
  fold(d: Delivery, holdMs: number | null) {
    return this.x.writes.submit((): FoldOutcome => {
      const head = this.s.held.get({ id: d.id, lease: d.lease });
      if (!head) return { kind: 'lost' };
      const younger = this.s.younger.all({ kind: head.kind, tenant: head.tenant, key: head.key, adapter: head.adapter, seq: shared.seqOf(head.id) });
      const plan = foldPlan(
        head.action,
        younger.map((y) => y.action),
        triedRow(head.attempts),
      );
      if (plan.latest !== null) this.s.takePayload.run({ id: head.id, from: younger[plan.latest]!.id });
      for (const y of younger.slice(0, plan.drop)) this.s.delete.run({ id: y.id });
      if (plan.outcome !== 'folded') {
        this.s.delete.run({ id: head.id });
        if (plan.outcome === 'superseded') this.s.dueNow.run({ id: younger[plan.drop]!.id, now: this.x.clock.now() });
        return { kind: plan.outcome, folded: plan.drop };
      }
      if (holdMs !== null) {
        this.s.hold.run({ id: head.id, dueAt: this.x.clock.now() + holdMs });
        return { kind: 'held', folded: plan.drop };
      }
      this.s.release.run({ id: head.id });
      return { kind: 'ready', delivery: toDelivery(this.s.one.get({ id: head.id })!), folded: plan.drop };
    });
  }

  renew(d: Delivery, leaseMs: number) {
    return this.x.writes.submit(() => this.s.renew.run({ id: d.id, lease: d.lease, dueAt: this.x.clock.now() + leaseMs }).changes === 1);
  }

  settle(d: Delivery, s: Settlement) {
    return this.x.writes.submit(() => {
      const row = this.s.held.get({ id: d.id, lease: d.lease });
      if (!row) return false;
      if (s.outcome === 'delivered') {
        this.s.delete.run({ id: d.id });
        return true;
      }
      const now = this.x.clock.now();
      const attempts = JSON.stringify(withAttempt(JSON.parse(row.attempts) as Delivery['attempts'], now, s.error));
      const notBefore = s.outcome === 'retry' && s.floorMs !== undefined ? now + s.floorMs : 0;
      if (s.outcome === 'retry') this.s.failed.run({ attempts, dueAt: now + s.delayMs, status: 'pending', deadAt: null, notBefore, id: d.id });
      else this.s.failed.run({ attempts, dueAt: now, status: 'dead', deadAt: now, notBefore, id: d.id });
      return true;
    });
  }

  async deadLetters(tenant: string | null, limit: number) {
    return this.s.dead.all({ tenant, limit }).map(toDelivery);
  }

  retryDeadLetter(tenant: string | null, id: string) {
    return this.x.writes.submit(() => this.s.retryDead.run({ now: this.x.clock.now(), id, tenant }).changes === 1);
  }

  dropDeadLetter(tenant: string | null, id: string) {
    return this.x.writes.submit(() => this.s.dropDead.run({ id, tenant }).changes === 1);
  }

  /** Only inside a claim's own transaction. */
  requeueFailing(scope: DeliveryScope, now: number): number {
    return this.s.requeue.run({ now, kind: scope.kind, tenant: scope.tenant, key: scope.key }).changes;
  }

  async backlog() {
    const b = this.s.backlog.get()!;
    const ats = [b.outboxAt, b.pendingAt].filter((x): x is number => x !== null);
    return { pending: b.pending, dead: b.dead, oldestAt: ats.length ? Math.min(...ats) : null, held: b.held };
  }

  sweepDeadLetters(retentionMs: number) {
    return this.x.writes.submit(() => this.s.sweepDead.run({ before: this.x.clock.now() - retentionMs, batch: SWEEP_BATCH }).changes);
  }

  /** Inside a sweep's transaction: counters unused for COUNTER_MEMORY_MS. */
  sweep(batch: number): number {
    return this.s.sweepCounters.run({ before: this.x.clock.now() - COUNTER_MEMORY_MS, batch }).changes;
  }
}
