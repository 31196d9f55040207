import type { KeptAnswer, RequestQuota, RequestBegin, RequestStore } from '../contract/index.js';
import * as shared from '../sql/requests.js';
import type { SqliteDb } from './sqlite-db.js';

/** Idempotency-Keys in the SQLite file; every call is one GroupCommit transaction. */
export class SqliteRequests implements RequestStore {
  private readonly s;

  constructor(private readonly x: SqliteDb) {
    const db = x.db;
    this.s = {
      lock: db.prepare<[Record<string, unknown>], shared.QuotaRow>(shared.LOCK_QUOTA),
      add: db.prepare(shared.ADD_QUOTA),
      held: db.prepare<[Record<string, unknown>], shared.HeldRow>(shared.HELD_REQUEST),
      put: db.prepare(shared.PUT_REQUEST),
      abandon: db.prepare<[Record<string, unknown>], { size: number }>(shared.ABANDON_REQUEST),
      tenants: db.prepare<[Record<string, unknown>], { tenant: string }>(shared.EXPIRED_TENANTS),
      sweep: db.prepare<[Record<string, unknown>], { size: number }>(shared.SWEEP_TENANT),
    };
  }

  private add(tenant: string, delta: RequestQuota) {
    this.s.add.run({ tenant, ...delta });
  }

  /** The quota, the look at what holds the key and the claim are one transaction. */
  begin(tenant: string, key: string, bodyHash: string, leaseMs: number, maxKeys: number) {
    return this.x.writes.submit((): RequestBegin => {
      const now = this.x.clock.now();
      const q = this.s.lock.get({ tenant })!;
      const step = shared.beginStep(q, this.s.held.get({ tenant, key }), now, maxKeys);
      if (step.delta) {
        this.s.put.run(shared.putValues(tenant, key, bodyHash, now + leaseMs));
        this.add(tenant, step.delta);
      }
      return step.answer;
    });
  }

  finish(tenant: string, key: string, bodyHash: string, answer: KeptAnswer, keepMs: number, maxBytes: number) {
    return this.x.writes.submit(() => {
      const q = this.s.lock.get({ tenant })!;
      const step = shared.finishStep(q, this.s.held.get({ tenant, key }), answer, maxBytes);
      this.s.put.run(shared.putValues(tenant, key, bodyHash, this.x.clock.now() + keepMs, answer[step.kept], step.size));
      this.add(tenant, step.delta);
      return step.kept;
    });
  }

  abandon(tenant: string, key: string, bodyHash: string) {
    return this.x.writes.submit(() => {
      const gone = this.s.abandon.get({ tenant, key, bodyHash });
      if (gone) this.add(tenant, { keys: -1, bytes: -gone.size });
    });
  }

  /** Inside a sweep's transaction. */
  sweep(batch: number): number {
    const now = this.x.clock.now();
    let n = 0;
    for (const { tenant } of this.s.tenants.all({ now, batch })) {
      const gone = this.s.sweep.all({ tenant, now, batch: batch - n });
      this.add(tenant, { keys: -gone.length, bytes: -gone.reduce((a, r) => a + r.size, 0) });
      n += gone.length;
      if (n >= batch) break;
    }
    return n;
  }
}
