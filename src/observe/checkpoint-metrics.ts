import { Counter, Gauge, type Registry } from 'prom-client';
import type { CheckpointStatus } from '../store/sqlite/checkpointer.js';

/**
 * SQLite's WAL and its checkpoints, read when scraped. Registered only on a
 * SQLite store, so no other store shows series that cannot move. The WAL
 * normally stays near 64 MiB; a worker that is down, or restarts the writer
 * keeps taking, mean the checkpoints are back on the writing thread and
 * decisions pay for them (docs/operations.md).
 */
export function watchCheckpoints(registry: Registry, read: () => CheckpointStatus | null): void {
  new Gauge({
    name: 'onceonly_sqlite_wal_bytes',
    help: "The SQLite WAL file's size now; it stays within journal_size_limit (128 MiB) plus one batch.",
    registers: [registry],
    collect() {
      const s = read();
      if (s) this.set(s.walBytes);
    },
  });
  new Gauge({
    name: 'onceonly_sqlite_checkpoint_worker_up',
    help: "1 while SQLite's checkpoint worker runs and its last pass did not fail; 0 means checkpoints run on the writing thread (slower).",
    registers: [registry],
    collect() {
      const s = read();
      if (s) this.set(s.workerUp ? 1 : 0);
    },
  });
  new Counter({
    name: 'onceonly_sqlite_wal_writer_restarts_total',
    help: 'Times the writer found the SQLite WAL past its limit and restarted it itself (a stall of the event loop each).',
    registers: [registry],
    collect() {
      const s = read();
      this.reset();
      if (s) this.inc(s.writerRestarts);
    },
  });
}
