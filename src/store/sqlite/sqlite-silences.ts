import type { Silence, SilenceStore, SilenceUpdate } from '../contract/index.js';
import { SILENCE_RETENTION_MS, SILENCE_TRIM_BATCH, type SilenceLimits } from '../contract/index.js';
import * as shared from '../sql/silences.js';
import type { SqliteDb } from './sqlite-db.js';

/** Silences in the SQLite file; every write is one GroupCommit transaction that bumps the version first (its row takes the new one). */
export class SqliteSilences implements SilenceStore {
  private readonly s;

  constructor(private readonly x: SqliteDb) {
    const db = x.db;
    this.s = {
      bump: db.prepare(shared.BUMP_VERSION),
      version: db.prepare<[], { v: number }>(shared.VERSION),
      create: db.prepare(shared.CREATE_SILENCE),
      trim: db.prepare(shared.TRIM_ENDED_SILENCES),
      update: db.prepare(shared.UPDATE_SILENCE),
      expire: db.prepare(shared.EXPIRE_SILENCE),
      get: db.prepare<[{ tenant: string; id: string }], shared.SilenceRow>(shared.GET_SILENCE),
      list: db.prepare<[{ tenant: string | null; after: number }], shared.SilenceRow>(shared.LIST_SILENCES),
      changed: db.prepare<[{ since: number }], shared.ChangedRow>(shared.CHANGED_SILENCES),
      sweep: db.prepare(shared.SWEEP_SILENCES),
    };
  }

  create(s: Silence, limits: SilenceLimits, now: number) {
    return this.x.writes.submit(() => {
      this.s.bump.run();
      const ok = this.s.create.run({ ...shared.silenceParams(s), now, maxOpen: limits.open }).changes === 1;
      if (ok) this.s.trim.run({ tenant: s.tenant, now, keep: limits.ended, batch: SILENCE_TRIM_BATCH });
      return ok;
    });
  }

  update(s: Silence, now: number) {
    return this.x.writes.submit((): SilenceUpdate => {
      this.s.bump.run();
      if (this.s.update.run({ ...shared.silenceParams(s), now }).changes === 1) return 'updated';
      return this.s.get.get({ tenant: s.tenant, id: s.id }) ? 'expired' : 'absent';
    });
  }

  expire(tenant: string, id: string, now: number) {
    return this.x.writes.submit(() => {
      this.s.bump.run();
      if (this.s.expire.run({ tenant, id, now }).changes === 1) return true;
      return this.s.get.get({ tenant, id }) !== undefined;
    });
  }

  async get(tenant: string, id: string): Promise<Silence | null> {
    const r = this.s.get.get({ tenant, id });
    return r ? shared.silenceOf(r) : null;
  }

  async list(tenant: string | null, endedAfter = shared.EVER): Promise<Silence[]> {
    return this.s.list.all({ tenant, after: endedAfter }).map(shared.silenceOf);
  }

  async changedSince(since: number) {
    return shared.changedOf(this.s.changed.all({ since }));
  }

  async version(): Promise<number> {
    return this.s.version.get()?.v ?? 0;
  }

  /** Inside a sweep's transaction. */
  sweep(batch: number): number {
    const gone = this.s.sweep.run({ before: this.x.clock.now() - SILENCE_RETENTION_MS, batch }).changes;
    if (gone > 0) this.s.bump.run();
    return gone;
  }
}
