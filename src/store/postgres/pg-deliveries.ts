import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import type { Clock } from '../../core/clock.js';
import type { OutboxEntry } from '../../core/outbox.js';
import { withAttempt, type Delivery, type DeliveryScope, type DeliveryStore, type Settlement } from '../delivery-contract.js';
import { transaction, type Queryable } from './pool.js';

const COLUMNS = `id, adapter, tenant, kind, action, key, severity, summary, data, at, n, retries, attempts, status, lease, dead_at AS "deadAt"`;

type Row = Omit<OutboxEntry, 'data'> & { data: string; id: string; adapter: string; n: number; retries: number; attempts: string; status: Delivery['status']; lease: string; deadAt: number | null };

function toDelivery(r: Row): Delivery {
  return {
    id: r.id, adapter: r.adapter, n: r.n, retries: r.retries, status: r.status, lease: r.lease,
    attempts: JSON.parse(r.attempts) as Delivery['attempts'],
    entry: { tenant: r.tenant, kind: r.kind, action: r.action, key: r.key, severity: r.severity, summary: r.summary, data: JSON.parse(r.data) as Record<string, unknown>, at: r.at },
    ...(r.deadAt === null ? {} : { deadAt: r.deadAt }),
  };
}

/** A delivery's place in fan-out order: its outbox id, the number before the dot of `outboxId.adapter`. */
const SEQ = (t: string) => `split_part(${t}.id, '.', 1)::bigint`;

/** Delivery state in Postgres: SKIP LOCKED lets replicas fan out and lease side by side without waiting on each other. */
export class PgDeliveries implements DeliveryStore {
  constructor(
    private readonly pool: pg.Pool,
    private readonly clock: Clock,
  ) {}

  fanOut(adapters: readonly string[], limit: number) {
    return transaction(this.pool, null, async (c) => {
      const now = this.clock.now();
      const taken = (
        await c.query<Omit<Row, 'adapter' | 'n' | 'retries' | 'attempts' | 'status' | 'lease' | 'deadAt'>>(
          `DELETE FROM outbox WHERE id IN (SELECT id FROM outbox ORDER BY id LIMIT $1 FOR UPDATE SKIP LOCKED)
           RETURNING id::text AS id, tenant, kind, action, key, severity, summary, data, at`,
          [limit],
        )
      ).rows.sort((a, b) => Number(a.id) - Number(b.id));
      for (const e of taken) {
        const { n } = (
          await c.query<{ n: number }>(
            `INSERT INTO delivery_counters (kind, tenant, key, action, n) VALUES ($1, $2, $3, $4, 1)
             ON CONFLICT (kind, tenant, key, action) DO UPDATE SET n = delivery_counters.n + 1 RETURNING n`,
            [e.kind, e.tenant, e.key, e.action],
          )
        ).rows[0]!;
        for (const adapter of adapters) {
          await c.query(
            `INSERT INTO deliveries (id, adapter, tenant, kind, action, key, severity, summary, data, at, n, due_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
            [`${e.id}.${adapter}`, adapter, e.tenant, e.kind, e.action, e.key, e.severity, e.summary, e.data, e.at, n, now],
          );
        }
      }
      return taken.length;
    });
  }

  /** One statement: the pick and the lease cannot be split, and rows another replica is leasing are skipped. */
  async leaseDue(owner: string, leaseMs: number, limit: number) {
    const now = this.clock.now();
    const { rows } = await this.pool.query<Row>(
      // Of one key's deliveries to one adapter only the oldest unsettled one
      // goes out (two calls in flight for one key would both find no ticket
      // and both create one); an older outbox entry of the key that another
      // replica is fanning out right now counts as unsettled too.
      `UPDATE deliveries SET due_at = $1, lease = $2
        WHERE id IN (
          SELECT d.id FROM deliveries d
           WHERE d.status = 'pending' AND d.due_at <= $3
             AND NOT EXISTS (SELECT 1 FROM deliveries e
                              WHERE e.kind = d.kind AND e.tenant = d.tenant AND e.key = d.key AND e.adapter = d.adapter
                                AND e.status = 'pending' AND ${SEQ('e')} < ${SEQ('d')})
             AND NOT EXISTS (SELECT 1 FROM outbox o WHERE o.kind = d.kind AND o.tenant = d.tenant AND o.key = d.key AND o.id < ${SEQ('d')})
           ORDER BY d.due_at LIMIT $4 FOR UPDATE SKIP LOCKED)
        RETURNING ${COLUMNS}`,
      [now + leaseMs, `${owner}:${randomUUID()}`, now, limit],
    );
    return rows.map(toDelivery);
  }

  settle(d: Delivery, s: Settlement) {
    return transaction(this.pool, null, async (c) => {
      const row = (await c.query<Row>(`SELECT ${COLUMNS} FROM deliveries WHERE id = $1 AND lease = $2 AND status = 'pending' FOR UPDATE`, [d.id, d.lease])).rows[0];
      if (!row) return false;
      if (s.outcome === 'delivered') {
        await c.query('DELETE FROM deliveries WHERE id = $1', [d.id]);
        return true;
      }
      const now = this.clock.now();
      const attempts = JSON.stringify(withAttempt(JSON.parse(row.attempts) as Delivery['attempts'], now, s.error));
      const [due, status, deadAt] = s.outcome === 'retry' ? [now + s.delayMs, 'pending', null] : [now, 'dead', now];
      await c.query(`UPDATE deliveries SET retries = retries + 1, attempts = $1, due_at = $2, status = $3, dead_at = $4, lease = '' WHERE id = $5`, [attempts, Math.ceil(due), status, deadAt, d.id]);
      return true;
    });
  }

  async deadLetters(tenant: string | null, limit: number) {
    const { rows } = await this.pool.query<Row>(
      `SELECT ${COLUMNS} FROM deliveries WHERE status = 'dead' AND ($1::text IS NULL OR tenant = $1) ORDER BY dead_at, id LIMIT $2`,
      [tenant, limit],
    );
    return rows.map(toDelivery);
  }

  async retryDeadLetter(tenant: string | null, id: string) {
    const r = await this.pool.query(
      `UPDATE deliveries SET status = 'pending', retries = 0, due_at = $1, lease = '', dead_at = NULL
        WHERE id = $2 AND status = 'dead' AND ($3::text IS NULL OR tenant = $3)`,
      [this.clock.now(), id, tenant],
    );
    return r.rowCount === 1;
  }

  /** Inside a claim's own transaction (it holds the key's lock). */
  async requeueFailing(c: Queryable, scope: DeliveryScope, now: number): Promise<number> {
    const r = await c.query(
      `UPDATE deliveries SET status = 'pending', retries = 0, due_at = $1, lease = '', dead_at = NULL
        WHERE kind = $2 AND tenant = $3 AND key = $4 AND (retries > 0 OR status = 'dead') AND (lease = '' OR due_at <= $1)`,
      [now, scope.kind, scope.tenant, scope.key],
    );
    return r.rowCount ?? 0;
  }

  async backlog() {
    const { rows } = await this.pool.query<{ pending: number; dead: number; outboxAt: number | null; pendingAt: number | null }>(
      `SELECT (SELECT count(*) FROM deliveries WHERE status = 'pending')::int AS pending,
              (SELECT count(*) FROM deliveries WHERE status = 'dead')::int AS dead,
              (SELECT min(at) FROM outbox) AS "outboxAt",
              (SELECT min(at) FROM deliveries WHERE status = 'pending') AS "pendingAt"`,
    );
    const b = rows[0]!;
    const ats = [b.outboxAt, b.pendingAt].filter((x): x is number => x !== null);
    return { pending: b.pending, dead: b.dead, oldestAt: ats.length ? Math.min(...ats) : null };
  }
}
