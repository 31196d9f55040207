import type { Database } from 'better-sqlite3';

interface Pending {
  run: () => unknown;
  resolve: (value: unknown) => void;
  reject: (reason: unknown) => void;
}

/**
 * Group commit: every write that arrives in one turn of the event loop runs in
 * ONE `BEGIN IMMEDIATE` transaction, flushed on setImmediate. Each operation
 * stays atomic (the transaction holds the write lock), while the fsync and WAL
 * append are paid once per batch instead of once per decision, which is what
 * keeps a synchronous SQLite driver from starving the HTTP server. Each
 * operation is all or nothing (a savepoint), and one failing does not fail
 * the batch.
 *
 * A promise resolves only after its transaction committed, so an HTTP answer
 * is never sent for a decision that is not yet durable.
 */
export class GroupCommit {
  private queue: Pending[] = [];
  private scheduled = false;
  private readonly runBatch: (batch: Pending[]) => unknown[];

  constructor(
    db: Database,
    private readonly maxBatch = 1024,
    /** What a failed operation or commit rejects with (the store's own error for a file that cannot be written). */
    private readonly failure: (error: unknown) => unknown = (e) => e,
    /** A batch committed with at least one operation in it: the file can be written. */
    private readonly committed: () => void = () => {},
  ) {
    // Each operation in a SAVEPOINT of its own (better-sqlite3 nests a
    // transaction function as one): an operation that fails half way is
    // rolled back whole, its first writes included, while its neighbours in
    // the batch still commit.
    const one = db.transaction((op: Pending) => op.run());
    const txn = db.transaction((batch: Pending[]) =>
      batch.map((op) => {
        try {
          return { ok: true as const, value: one(op) };
        } catch (error) {
          // SQLite rolls the whole transaction back on some errors (a full
          // disk, I/O): the operations after this one would then each run
          // and commit alone. Fail the batch instead; nothing of it stays.
          if (!db.inTransaction) throw error;
          return { ok: false as const, error };
        }
      }),
    );
    this.runBatch = (batch) => txn.immediate(batch);
  }

  submit<T>(run: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ run, resolve: resolve as (v: unknown) => void, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(this.flush);
      }
    });
  }

  /** Runs whatever is queued now; used on close so nothing queued is lost. */
  readonly flush = (): void => {
    this.scheduled = false;
    while (this.queue.length > 0) {
      const batch = this.queue.splice(0, this.maxBatch);
      let results: unknown[];
      try {
        results = this.runBatch(batch);
      } catch (error) {
        // The commit itself failed (e.g. the lock could not be had in time): nothing applied.
        const reason = this.failure(error);
        for (const op of batch) op.reject(reason);
        continue;
      }
      if (results.some((r) => (r as { ok: boolean }).ok)) this.committed();
      batch.forEach((op, i) => {
        const r = results[i] as { ok: true; value: unknown } | { ok: false; error: unknown };
        if (r.ok) op.resolve(r.value);
        else op.reject(this.failure(r.error));
      });
    }
  };
}
