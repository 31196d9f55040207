import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import type { Clock } from '../../core/clock.js';
import { decodeRoute, routedLines, type OutboxAction, type OutboxEntry } from '../../core/outbox.js';
import {
  COUNTER_MEMORY_MS,
  type Delivery,
  type DeliveryStore,
  type FoldOutcome,
  foldPlan,
  triedRow,
  type Settlement,
  SWEEP_BATCH,
  withAttempt,
} from '../contract/index.js';
import { bind, forPg } from '../sql/named.js';
import * as shared from '../sql/deliveries.js';
import { transaction } from './pool.js';

type Row = Omit<OutboxEntry, 'data'> & {
  data: string;
  id: string;
  adapter: string;
  n: number;
  retries: number;
  attempts: string;
  status: Delivery['status'];
  lease: string;
  deadAt: number | null;
  held: number;
  /** count(*) of those waiting behind a dead letter: a bigint, which pg hands over as text */
  waiting?: string | null;
};

function toDelivery(r: Row): Delivery {
  return {
    id: r.id,
    adapter: r.adapter,
    n: r.n,
    retries: r.retries,
    status: r.status,
    lease: r.lease,
    attempts: JSON.parse(r.attempts) as Delivery['attempts'],
    entry: {
      tenant: r.tenant,
      kind: r.kind,
      action: r.action,
      key: r.key,
      severity: r.severity,
      summary: r.summary,
      data: JSON.parse(r.data) as Record<string, unknown>,
      at: r.at,
    },
    ...(r.deadAt === null ? {} : { deadAt: r.deadAt }),
    ...(r.held ? { held: true } : {}),
    ...(r.waiting === undefined || r.waiting === null ? {} : { waiting: Number(r.waiting) }),
  };
}

/** A delivery's place in fan-out order: its outbox id, the number before the dot of `outboxId.adapter`. */
const SEQ = (t: string) => `split_part(${t}.id, '.', 1)::bigint`;

/** The statements shared with SQLite, rewritten once for pg's positional parameters. */
const S = {
  nextN: forPg(shared.NEXT_N),
  insert: forPg(shared.INSERT_DELIVERY),
  held: forPg(`${shared.HELD} FOR UPDATE`),
  delete: forPg(shared.DELETE_DELIVERY),
  failed: forPg(shared.FAILED),
  renew: forPg(shared.RENEW),
  dead: forPg(shared.deadLetters(SEQ)),
  dropDead: forPg(shared.DROP_DEAD),
  retryDead: forPg(shared.RETRY_DEAD),
  backlog: forPg(shared.BACKLOG),
  sweepCounters: forPg(shared.SWEEP_COUNTERS),
  sweepDead: forPg(shared.SWEEP_DEAD),
  younger: forPg(`${shared.youngerPending(SEQ)} FOR UPDATE`),
  takePayload: forPg(shared.TAKE_PAYLOAD),
  dueNow: forPg(shared.DUE_NOW),
  hold: forPg(shared.HOLD),
  release: forPg(shared.RELEASE),
  one: forPg(`SELECT ${shared.DELIVERY_COLUMNS} FROM deliveries WHERE id = @id`),
};

/** Postgres's own: taking from the outbox and the lease's pick, both with SKIP LOCKED. */
const SQL = {
  /**
   * The oldest outbox entries no other replica is taking, locked for this
   * transaction. Ordered by the column, not the text it is handed over as:
   * `ORDER BY id` would sort by the output's `id` ('100' before '95'), a
   * key's first row would not be its oldest, and it would wait forever.
   */
  lockOutbox: `SELECT o.id::text AS id, o.kind, o.tenant, o.key FROM outbox o ORDER BY o.id LIMIT $1 FOR UPDATE SKIP LOCKED`,
  /**
   * Of the keys locked, those with an older entry still in the outbox: another
   * replica is fanning it out now (locked, its delete not committed). Their
   * entries wait: taken now, they would be numbered before that older one,
   * and a key's `update:1` would reach the receiver after its `update:2`.
   */
  olderHeld: `
SELECT DISTINCT t.kind, t.tenant, t.key FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[]) AS t(kind, tenant, key, first)
 WHERE EXISTS (SELECT 1 FROM outbox o WHERE o.kind = t.kind AND o.tenant = t.tenant AND o.key = t.key AND o.id < t.first)`,
  takeOutbox: `
DELETE FROM outbox WHERE id = ANY($1::bigint[])
RETURNING id::text AS id, tenant, kind, action, key, severity, summary, data, at, route`,
  /**
   * One statement: the pick and the lease cannot be split, and rows another
   * replica is leasing are skipped. Of one key's deliveries to one adapter
   * only the oldest unsettled one goes out (two calls in flight for one key
   * would both find no ticket and both create one); an older outbox entry of
   * the key that another replica is fanning out right now counts as
   * unsettled too.
   */
  leaseDue: `
UPDATE deliveries SET due_at = $1, lease = $2
 WHERE id IN (
   SELECT d.id FROM deliveries d
    WHERE d.status = 'pending' AND d.due_at <= $3
      AND NOT EXISTS (SELECT 1 FROM deliveries e
                       WHERE e.kind = d.kind AND e.tenant = d.tenant AND e.key = d.key AND e.adapter = d.adapter
                         AND ${SEQ('e')} < ${SEQ('d')})
      AND NOT EXISTS (SELECT 1 FROM outbox o WHERE o.kind = d.kind AND o.tenant = d.tenant AND o.key = d.key AND o.id < ${SEQ('d')})
    ORDER BY d.due_at LIMIT $4 FOR UPDATE SKIP LOCKED)
RETURNING ${shared.DELIVERY_COLUMNS}`,
};

/** Delivery state in Postgres: SKIP LOCKED lets replicas fan out and lease side by side without waiting on each other. */
export class PgDeliveries implements DeliveryStore {
  constructor(
    private readonly pool: pg.Pool,
    private readonly clock: Clock,
  ) {}

  fanOut(adapters: readonly string[], limit: number) {
    return transaction(this.pool, null, async (c) => {
      const now = this.clock.now();
      const locked = (await c.query<{ id: string; kind: string; tenant: string; key: string }>(SQL.lockOutbox, [limit])).rows;
      if (locked.length === 0) return 0;
      const first = new Map<string, { kind: string; tenant: string; key: string; first: string }>();
      // A key's oldest locked row, compared as the number it is, whatever order the rows came in.
      for (const r of locked) {
        const k = `${r.kind}\u0000${r.tenant}\u0000${r.key}`;
        const seen = first.get(k);
        if (!seen || BigInt(r.id) < BigInt(seen.first)) first.set(k, { kind: r.kind, tenant: r.tenant, key: r.key, first: r.id });
      }
      const keys = [...first.values()];
      const held = new Set(
        (
          await c.query<{ kind: string; tenant: string; key: string }>(SQL.olderHeld, [
            keys.map((k) => k.kind),
            keys.map((k) => k.tenant),
            keys.map((k) => k.key),
            keys.map((k) => k.first),
          ])
        ).rows.map((r) => `${r.kind}\u0000${r.tenant}\u0000${r.key}`),
      );
      const ids = locked.filter((r) => !held.has(`${r.kind}\u0000${r.tenant}\u0000${r.key}`)).map((r) => r.id);
      const taken =
        ids.length === 0
          ? []
          : (
              await c.query<Omit<Row, 'adapter' | 'n' | 'retries' | 'attempts' | 'status' | 'lease' | 'deadAt'> & { route: string | null }>(SQL.takeOutbox, [
                ids,
              ])
            ).rows;
      taken.sort((a, b) => Number(a.id) - Number(b.id));
      for (const { route, ...e } of taken) {
        const { n } = (await c.query<{ n: number }>(S.nextN.text, bind(S.nextN, { kind: e.kind, tenant: e.tenant, key: e.key, action: e.action, now })))
          .rows[0]!;
        for (const adapter of routedLines(adapters, decodeRoute(route))) {
          await c.query(S.insert.text, bind(S.insert, { ...e, id: `${e.id}.${adapter}`, adapter, n, dueAt: now }));
        }
      }
      return taken.length;
    });
  }

  async leaseDue(owner: string, leaseMs: number, limit: number) {
    const now = this.clock.now();
    const { rows } = await this.pool.query<Row>(SQL.leaseDue, [now + leaseMs, `${owner}:${randomUUID()}`, now, limit]);
    return rows.map(toDelivery);
  }

  /** One transaction: the head locked under its lease, the younger rows locked, the fold and the hold or release. */
  fold(d: Delivery, holdMs: number | null) {
    return transaction(this.pool, null, async (c): Promise<FoldOutcome> => {
      const run = <T extends pg.QueryResultRow>(st: { text: string; names: string[] }, v: Record<string, unknown>) => c.query<T>(st.text, bind(st, v));
      const head = (await run<Row>(S.held, { id: d.id, lease: d.lease })).rows[0];
      if (!head) return { kind: 'lost' };
      const younger = (
        await run<{ id: string; action: OutboxAction }>(S.younger, {
          kind: head.kind,
          tenant: head.tenant,
          key: head.key,
          adapter: head.adapter,
          seq: shared.seqOf(head.id),
        })
      ).rows;
      const plan = foldPlan(
        head.action,
        younger.map((y) => y.action),
        triedRow(head.attempts),
      );
      if (plan.latest !== null) await run(S.takePayload, { id: head.id, from: younger[plan.latest]!.id });
      for (const y of younger.slice(0, plan.drop)) await run(S.delete, { id: y.id });
      if (plan.outcome !== 'folded') {
        await run(S.delete, { id: head.id });
        if (plan.outcome === 'superseded') await run(S.dueNow, { id: younger[plan.drop]!.id, now: this.clock.now() });
        return { kind: plan.outcome, folded: plan.drop };
      }
      if (holdMs !== null) {
        await run(S.hold, { id: head.id, dueAt: Math.ceil(this.clock.now() + holdMs) });
        return { kind: 'held', folded: plan.drop };
      }
      await run(S.release, { id: head.id });
      return { kind: 'ready', delivery: toDelivery((await run<Row>(S.one, { id: head.id })).rows[0]!), folded: plan.drop };
    });
  }

  async renew(d: Delivery, leaseMs: number) {
    return (await this.pool.query(S.renew.text, bind(S.renew, { id: d.id, lease: d.lease, dueAt: Math.ceil(this.clock.now() + leaseMs) }))).rowCount === 1;
  }

  settle(d: Delivery, s: Settlement) {
    return transaction(this.pool, null, async (c) => {
      const row = (await c.query<Row>(S.held.text, bind(S.held, { id: d.id, lease: d.lease }))).rows[0];
      if (!row) return false;
      if (s.outcome === 'delivered') {
        await c.query(S.delete.text, bind(S.delete, { id: d.id }));
        return true;
      }
      const now = this.clock.now();
      const attempts = JSON.stringify(withAttempt(JSON.parse(row.attempts) as Delivery['attempts'], now, s.error));
      const [dueAt, status, deadAt] = s.outcome === 'retry' ? [Math.ceil(now + s.delayMs), 'pending', null] : [now, 'dead', now];
      const notBefore = s.outcome === 'retry' && s.floorMs !== undefined ? Math.ceil(now + s.floorMs) : 0;
      await c.query(S.failed.text, bind(S.failed, { attempts, dueAt, status, deadAt, notBefore, id: d.id }));
      return true;
    });
  }

  async deadLetters(tenant: string | null, limit: number) {
    return (await this.pool.query<Row>(S.dead.text, bind(S.dead, { tenant, limit }))).rows.map(toDelivery);
  }

  async retryDeadLetter(tenant: string | null, id: string) {
    return (await this.pool.query(S.retryDead.text, bind(S.retryDead, { now: this.clock.now(), id, tenant }))).rowCount === 1;
  }

  async dropDeadLetter(tenant: string | null, id: string) {
    return (await this.pool.query(S.dropDead.text, bind(S.dropDead, { id, tenant }))).rowCount === 1;
  }

  async backlog() {
    const b = (await this.pool.query<{ pending: number; held: number; dead: number; outboxAt: number | null; pendingAt: number | null }>(S.backlog.text))
      .rows[0]!;
    const ats = [b.outboxAt, b.pendingAt].filter((x): x is number => x !== null);
    return { pending: b.pending, dead: b.dead, oldestAt: ats.length ? Math.min(...ats) : null, held: b.held };
  }

  async sweepDeadLetters(retentionMs: number): Promise<number> {
    return (await this.pool.query(S.sweepDead.text, bind(S.sweepDead, { before: this.clock.now() - retentionMs, batch: SWEEP_BATCH }))).rowCount ?? 0;
  }

  /** Counters unused for COUNTER_MEMORY_MS, one small batch. */
  async sweep(): Promise<number> {
    return (
      (await this.pool.query(S.sweepCounters.text, bind(S.sweepCounters, { before: this.clock.now() - COUNTER_MEMORY_MS, batch: SWEEP_BATCH }))).rowCount ?? 0
    );
  }
}
