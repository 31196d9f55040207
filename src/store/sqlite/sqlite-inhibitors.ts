import { type InhibitorStore, MAX_INHIBITORS_FOUND } from '../contract/index.js';
import * as shared from '../sql/inhibitors.js';
import type { SqliteDb } from './sqlite-db.js';

/** Inhibitors in the SQLite file; each write is one GroupCommit transaction. */
export class SqliteInhibitors implements InhibitorStore {
  private readonly s;

  constructor(private readonly x: SqliteDb) {
    const db = x.db;
    this.s = {
      put: db.prepare(shared.PUT_INHIBITOR),
      find: db.prepare<[Record<string, unknown>], { source: string }>(shared.FIND_INHIBITORS),
      remove: db.prepare(shared.REMOVE_INHIBITOR),
      sweep: db.prepare(shared.SWEEP_INHIBITORS),
    };
  }

  put(tenant: string, rule: string, tuple: string, source: string, ttlMs: number) {
    return this.x.writes.submit(() => {
      this.s.put.run({ tenant, rule, tuple, source, expiresAt: this.x.clock.now() + ttlMs });
    });
  }

  async find(tenant: string, rule: string, tuple: string) {
    return this.s.find.all({ tenant, rule, tuple, now: this.x.clock.now(), limit: MAX_INHIBITORS_FOUND }).map((r) => r.source);
  }

  remove(tenant: string, source: string) {
    return this.x.writes.submit(() => {
      this.s.remove.run({ tenant, source });
    });
  }

  /** Inside a sweep's transaction. */
  sweep(batch: number): number {
    return this.s.sweep.run({ now: this.x.clock.now(), batch }).changes;
  }
}
