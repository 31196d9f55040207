import type { RequestBegin, RequestStore, StoredAnswer } from '../contract/index.js';
import * as shared from '../sql/requests.js';
import type { SqliteDb } from './sqlite-db.js';

/** Idempotency-Keys in the SQLite file; every call is one GroupCommit transaction. */
export class SqliteRequests implements RequestStore {
  private readonly s;

  constructor(private readonly x: SqliteDb) {
    const db = x.db;
    this.s = {
      begin: db.prepare(shared.BEGIN_REQUEST),
      held: db.prepare<[Record<string, unknown>], shared.HeldRow>(shared.HELD_REQUEST),
      finish: db.prepare(shared.FINISH_REQUEST),
      abandon: db.prepare(shared.ABANDON_REQUEST),
      sweep: db.prepare(shared.SWEEP_REQUESTS),
    };
  }

  /** The claim and the look at what holds the key are one transaction. */
  begin(tenant: string, key: string, bodyHash: string, leaseMs: number) {
    return this.x.writes.submit((): RequestBegin => {
      const now = this.x.clock.now();
      if (this.s.begin.run({ tenant, key, bodyHash, until: now + leaseMs, now }).changes === 1) return { state: 'new' };
      return shared.heldAs(this.s.held.get({ tenant, key }));
    });
  }

  finish(tenant: string, key: string, bodyHash: string, answer: StoredAnswer, keepMs: number) {
    return this.x.writes.submit(() => {
      this.s.finish.run({ tenant, key, bodyHash, ...answer, until: this.x.clock.now() + keepMs });
    });
  }

  abandon(tenant: string, key: string, bodyHash: string) {
    return this.x.writes.submit(() => {
      this.s.abandon.run({ tenant, key, bodyHash });
    });
  }

  /** Inside a sweep's transaction. */
  sweep(batch: number): number {
    return this.s.sweep.run({ now: this.x.clock.now(), batch }).changes;
  }
}
