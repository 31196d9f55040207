import { randomUUID } from 'node:crypto';
import type Database from 'better-sqlite3';
import type { Clock } from '../../core/clock.js';
import type { OutboxEntry } from '../../core/outbox.js';
import { withAttempt, type Delivery, type DeliveryScope, type DeliveryStore, type Settlement } from '../delivery-contract.js';
import type { GroupCommit } from './group-commit.js';
import * as sql from './delivery-statements.js';

type Flat<T> = Omit<T, 'data'> & { data: string };
type Row = Flat<OutboxEntry> & Omit<Delivery, 'entry' | 'attempts' | 'deadAt'> & { attempts: string; deadAt: number | null };

function toDelivery(r: Row): Delivery {
  const { id, adapter, n, retries, attempts, status, lease, deadAt, tenant, kind, action, key, severity, summary, data, at } = r;
  return {
    id, adapter, n, retries, status, lease,
    attempts: JSON.parse(attempts) as Delivery['attempts'],
    entry: { tenant, kind, action, key, severity, summary, data: JSON.parse(data) as Record<string, unknown>, at },
    ...(deadAt === null ? {} : { deadAt }),
  };
}

/** Delivery state in the SQLite file; every write is one GroupCommit transaction. */
export class SqliteDeliveries implements DeliveryStore {
  private readonly s;

  constructor(
    db: Database.Database,
    private readonly writes: GroupCommit,
    private readonly clock: Clock,
  ) {
    this.s = {
      take: db.prepare<[number], Flat<OutboxEntry> & { id: number }>(sql.TAKE_OUTBOX),
      deleteOutbox: db.prepare<[number]>(sql.DELETE_OUTBOX),
      nextN: db.prepare<[string, string, string, string], { n: number }>(sql.NEXT_N),
      insert: db.prepare(sql.INSERT_DELIVERY),
      lease: db.prepare<[number, string, number, number], Row>(sql.LEASE_DUE),
      held: db.prepare<[string, string], Row>(sql.HELD),
      delete: db.prepare<[string]>(sql.DELETE_DELIVERY),
      failed: db.prepare<[string, number, string, number | null, string]>(sql.FAILED),
      dead: db.prepare<[string | null, string | null, number], Row>(sql.DEAD_LETTERS),
      retryDead: db.prepare<[number, string, string | null, string | null]>(sql.RETRY_DEAD),
      requeue: db.prepare<[{ now: number } & DeliveryScope]>(sql.REQUEUE_FAILING),
      backlog: db.prepare<[], { pending: number; dead: number; outboxAt: number | null; pendingAt: number | null }>(sql.BACKLOG),
    };
  }

  fanOut(adapters: readonly string[], limit: number) {
    return this.writes.submit(() => {
      const now = this.clock.now();
      const rows = this.s.take.all(limit);
      for (const { id: outboxId, ...e } of rows) {
        const n = this.s.nextN.get(e.kind, e.tenant, e.key, e.action)!.n;
        for (const adapter of adapters) this.s.insert.run({ ...e, id: `${outboxId}.${adapter}`, adapter, n, dueAt: now });
        this.s.deleteOutbox.run(outboxId);
      }
      return rows.length;
    });
  }

  leaseDue(owner: string, leaseMs: number, limit: number) {
    return this.writes.submit(() => {
      const now = this.clock.now();
      return this.s.lease.all(now + leaseMs, `${owner}:${randomUUID()}`, now, limit).map(toDelivery);
    });
  }

  settle(d: Delivery, s: Settlement) {
    return this.writes.submit(() => {
      const row = this.s.held.get(d.id, d.lease);
      if (!row) return false;
      if (s.outcome === 'delivered') {
        this.s.delete.run(d.id);
        return true;
      }
      const now = this.clock.now();
      const attempts = JSON.stringify(withAttempt(JSON.parse(row.attempts) as Delivery['attempts'], now, s.error));
      if (s.outcome === 'retry') this.s.failed.run(attempts, now + s.delayMs, 'pending', null, d.id);
      else this.s.failed.run(attempts, now, 'dead', now, d.id);
      return true;
    });
  }

  async deadLetters(tenant: string | null, limit: number) {
    return this.s.dead.all(tenant, tenant, limit).map(toDelivery);
  }

  retryDeadLetter(tenant: string | null, id: string) {
    return this.writes.submit(() => this.s.retryDead.run(this.clock.now(), id, tenant, tenant).changes === 1);
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
}
