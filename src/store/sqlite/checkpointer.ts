import { statSync } from 'node:fs';
import { once } from 'node:events';
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type { Database } from 'better-sqlite3';

/**
 * The WAL's checkpoints, taken on a thread of their own.
 *
 * In WAL mode every commit appends the pages it changed to the WAL, and a
 * checkpoint copies them back into the database file. SQLite's automatic
 * checkpoint runs inside the commit that crosses its threshold, on the
 * thread that committed: here the event loop, which stalls for every page
 * copied and synced. Under the HTTP mix that was a tenth of the server's
 * CPU. This worker, on its own connection, takes a PASSIVE checkpoint every
 * `intervalMs`: it copies what is committed without taking any lock a
 * writer needs, so the event loop never waits for it.
 *
 * A PASSIVE checkpoint cannot restart the WAL while writes keep coming, so
 * the main connection keeps an automatic checkpoint at a higher threshold
 * (`WAL_PAGES`): by the time it fires, the worker has copied nearly all of
 * the WAL, the main thread copies only the last few pages, and the WAL
 * starts over from its beginning. The WAL file therefore stays near
 * `WAL_PAGES` pages; if the worker stops or fails, the automatic
 * checkpoint still bounds it, only on the main thread again.
 *
 * The automatic checkpoint gives up when the worker's pass holds the
 * checkpoint lock. On a loaded machine with writes that never pause it
 * missed often enough for the WAL to pass 240 MB (four times the
 * threshold). So after each committed batch the writer looks at the WAL
 * file: grown past twice the threshold (`journal_size_limit`, to which every
 * restart truncates it) means no restart has happened since, and the writer
 * takes a RESTART checkpoint itself, while the worker, seeing the same size,
 * leaves the checkpoint lock to it. A rare stall on the event loop, in
 * exchange for a bound that does not depend on timing.
 */
export const WAL_PAGES = 16_384;

/** CommonJS, evaluated in the worker: no file to find under `tsx` or in `dist`. */
const WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.path, { fileMustExist: true, timeout: 0 });
const { statSync } = require('node:fs');
const timer = setInterval(() => {
  // Busy, or the file cannot be written for now: the next turn tries again,
  // and the main connection's automatic checkpoint still bounds the WAL.
  try {
    // Past the limit, the checkpoint lock is left to the writer's RESTART.
    if (statSync(workerData.wal).size > workerData.limitBytes) return;
    db.pragma('wal_checkpoint(PASSIVE)');
  } catch {}
}, workerData.intervalMs);
parentPort.once('message', () => {
  clearInterval(timer);
  db.close();
  parentPort.close();
});
`;

/** Resolved once: the worker loads the same better-sqlite3 this process does. */
const DRIVER = createRequire(import.meta.url).resolve('better-sqlite3');

export class Checkpointer {
  private readonly worker: Worker;
  private readonly exited: Promise<unknown>;

  private readonly wal: string;

  constructor(
    path: string,
    /** The WAL's size, in bytes, past which the writer restarts it itself. */
    private readonly limitBytes: number,
    intervalMs = 50,
  ) {
    this.wal = `${path}-wal`;
    this.worker = new Worker(WORKER, { eval: true, workerData: { path, wal: this.wal, limitBytes, driver: DRIVER, intervalMs } });
    this.exited = once(this.worker, 'exit').catch(() => undefined);
    // A checkpoint that could not start (the file gone, say) costs only the
    // offload: the automatic checkpoint is still there. Nothing to rethrow.
    this.worker.on('error', () => {});
    // Never what keeps a process alive: stop() is for an orderly close.
    this.worker.unref();
  }

  /** After a committed batch, on the writing connection: the hard bound on the WAL. */
  afterCommit(db: Database): void {
    let size = 0;
    try {
      size = statSync(this.wal).size;
    } catch {
      return;
    }
    if (size <= this.limitBytes) return;
    try {
      db.pragma('wal_checkpoint(RESTART)');
    } catch {
      // The file cannot be written for now: the batch is committed all the same, and the next one tries again.
    }
  }

  /** Closes the worker's connection before the main one, so the last to close cleans up the WAL. */
  async stop(): Promise<void> {
    this.worker.postMessage('stop');
    const timeout = setTimeout(() => void this.worker.terminate(), 2000);
    await this.exited;
    clearTimeout(timeout);
  }
}
