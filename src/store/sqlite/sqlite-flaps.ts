import { MAX_TRANSITIONS_KEPT, type FlapStore, type Transition } from '../contract/index.js';
import * as shared from '../sql/flaps.js';
import type { SqliteDb } from './sqlite-db.js';

/** Transitions in the SQLite file; a record is one GroupCommit transaction (the insert and its trim). */
export class SqliteFlaps implements FlapStore {
  private readonly s;

  constructor(private readonly x: SqliteDb) {
    const db = x.db;
    this.s = {
      record: db.prepare(shared.RECORD_FLAP),
      trim: db.prepare(shared.TRIM_FLAPS),
      history: db.prepare<[Record<string, unknown>], shared.FlapRow>(shared.FLAP_HISTORY),
      sweep: db.prepare(shared.SWEEP_FLAPS),
    };
  }

  record(tenant: string, key: string, action: Transition['action'], at: number, keepMs: number) {
    return this.x.writes.submit(() => {
      this.s.record.run({ tenant, key, at, action, until: at + keepMs });
      this.s.trim.run({ tenant, key, before: at - keepMs, kept: MAX_TRANSITIONS_KEPT });
    });
  }

  async history(tenant: string, key: string, since: number) {
    return this.s.history.all({ tenant, key, since }).map(shared.transitionOf);
  }

  /** Inside a sweep's transaction. */
  sweep(batch: number): number {
    return this.s.sweep.run({ now: this.x.clock.now(), batch }).changes;
  }
}
