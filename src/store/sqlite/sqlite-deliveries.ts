import { randomUUID } from 'node:crypto';
import type { OutboxEntry } from '../../core/outbox.js';
import { COUNTER_MEMORY_MS, SWEEP_BATCH, type Delivery, type DeliveryScope, type DeliveryStore, type Settlement, withAttempt } from '../contract/index.js';
import * as shared from '../sql/deliveries.js';
import type { SqliteDb } from './sqlite-db.js';

type Flat<T> = Omit<T, 'data'> & { data: string };
type Row = Flat<OutboxEntry> & Omit<Delivery, 'entry' | 'attempts' | 'deadAt'> & { attempts: string; deadAt: number | null };

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
  };
}

/** A delivery's place in fan-out order: its outbox id, the number before the dot of `outboxId.adapter`. */
const SEQ = (t: string) => `CAST(substr(${t}.id, 1, instr(${t}.id, '.') - 1) AS INTEGER)`;

/** SQLite's own: taking from the outbox, and the lease's pick. The rest is shared with Postgres (sql/deliveries.ts). */
const SQL = {
  takeOutbox: `SELECT id, tenant, kind, action, key, severity, summary, data, at FROM outbox ORDER BY id LIMIT ?`,
  deleteOutbox: `DELETE FROM outbox WHERE id = ?`,
  /**
   * in: lease end, token, now, limit. One statement: the pick and the lease
   * cannot be split. Of one key's deliveries to one adapter only the oldest
   * unsettled one is picked: two calls in flight for one key would both find
   * no ticket and both create one.
   */
  leaseDue: `
UPDATE deliveries SET due_at = ?, lease = ?
 WHERE id IN (
   SELECT d.id FROM deliveries d
    WHERE d.status = 'pending' AND d.due_at <= ?
      AND NOT EXISTS (SELECT 1 FROM deliveries e
                       WHERE e.kind = d.kind AND e.tenant = d.tenant AND e.key = d.key AND e.adapter = d.adapter
                         AND e.status = 'pending' AND ${SEQ('e')} < ${SEQ('d')})
    ORDER BY d.due_at LIMIT ?)
RETURNING ${shared.DELIVERY_COLUMNS}`,
};

/** Delivery state in the SQLite file; every write is one GroupCommit transaction. */
export class SqliteDeliveries implements DeliveryStore {
  private readonly s;

  constructor(private readonly x: SqliteDb) {
    const db = x.db;
    this.s = {
      take: db.prepare<[number], Flat<OutboxEntry> & { id: number }>(SQL.takeOutbox),
      deleteOutbox: db.prepare<[number]>(SQL.deleteOutbox),
      lease: db.prepare<[number, string, number, number], Row>(SQL.leaseDue),
      nextN: db.prepare<[DeliveryScope & { action: string; now: number }], { n: number }>(shared.NEXT_N),
      insert: db.prepare(shared.INSERT_DELIVERY),
      held: db.prepare<[{ id: string; lease: string }], Row>(shared.HELD),
      delete: db.prepare<[{ id: string }]>(shared.DELETE_DELIVERY),
      failed: db.prepare<[{ attempts: string; dueAt: number; status: string; deadAt: number | null; id: string }]>(shared.FAILED),
      dead: db.prepare<[{ tenant: string | null; limit: number }], Row>(shared.DEAD_LETTERS),
      retryDead: db.prepare<[{ now: number; id: string; tenant: string | null }]>(shared.RETRY_DEAD),
      requeue: db.prepare<[{ now: number } & DeliveryScope]>(shared.REQUEUE_FAILING),
      backlog: db.prepare<[], { pending: number; dead: number; outboxAt: number | null; pendingAt: number | null }>(shared.BACKLOG),
      sweepCounters: db.prepare<[{ before: number; batch: number }]>(shared.SWEEP_COUNTERS),
      sweepDead: db.prepare<[{ before: number; batch: number }]>(shared.SWEEP_DEAD),
    };
  }

  fanOut(adapters: readonly string[], limit: number) {
    return this.x.writes.submit(() => {
      const now = this.x.clock.now();
      const rows = this.s.take.all(limit);
      for (const { id: outboxId, ...e } of rows) {
        const n = this.s.nextN.get({ kind: e.kind, tenant: e.tenant, key: e.key, action: e.action, now })!.n;
        for (const adapter of adapters) this.s.insert.run({ ...e, id: `${outboxId}.${adapter}`, adapter, n, dueAt: now });
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
      if (s.outcome === 'retry') this.s.failed.run({ attempts, dueAt: now + s.delayMs, status: 'pending', deadAt: null, id: d.id });
      else this.s.failed.run({ attempts, dueAt: now, status: 'dead', deadAt: now, id: d.id });
      return true;
    });
  }

  async deadLetters(tenant: string | null, limit: number) {
    return this.s.dead.all({ tenant, limit }).map(toDelivery);
  }

  retryDeadLetter(tenant: string | null, id: string) {
    return this.x.writes.submit(() => this.s.retryDead.run({ now: this.x.clock.now(), id, tenant }).changes === 1);
  }

  /** Only inside a claim's own transaction. */
  requeueFailing(scope: DeliveryScope, now: number): number {
    return this.s.requeue.run({ now, kind: scope.kind, tenant: scope.tenant, key: scope.key }).changes;
  }

  async backlog() {
    const b = this.s.backlog.get()!;
    const ats = [b.outboxAt, b.pendingAt].filter((x): x is number => x !== null);
    return { pending: b.pending, dead: b.dead, oldestAt: ats.length ? Math.min(...ats) : null };
  }

  sweepDeadLetters(retentionMs: number) {
    return this.x.writes.submit(() => this.s.sweepDead.run({ before: this.x.clock.now() - retentionMs, batch: SWEEP_BATCH }).changes);
  }

  /** Inside a sweep's transaction: counters unused for COUNTER_MEMORY_MS. */
  sweep(batch: number): number {
    return this.s.sweepCounters.run({ before: this.x.clock.now() - COUNTER_MEMORY_MS, batch }).changes;
  }
}
