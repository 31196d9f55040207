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
 * checkpoint still bounds it, only on the main thread again, and a new
 * worker is started a minute later (`respawnMs`).
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
parentPort.postMessage({ ready: true });
// Said once when passes start failing and once when they pass again, not
// every 50 ms: a busy checkpoint is not a failure (PASSIVE reports it in its
// result), so what throws here is the file itself (I/O, space, permissions).
let failing = false;
const timer = setInterval(() => {
  let size = 0;
  try {
    size = statSync(workerData.wal).size;
  } catch {}
  // Past the limit, the checkpoint lock is left to the writer's RESTART.
  if (size > workerData.limitBytes) return;
  try {
    db.pragma('wal_checkpoint(PASSIVE)');
    if (failing) parentPort.postMessage({ passing: true });
    failing = false;
  } catch (e) {
    if (!failing) parentPort.postMessage({ failed: String((e && e.message) || e) });
    failing = true;
  }
}, workerData.intervalMs);
parentPort.once('message', () => {
  clearInterval(timer);
  db.close();
  parentPort.close();
});
`;

/** The longest the writer waits for the worker's pass before it restarts the WAL itself (then the next batch tries again). */
const RESTART_WAIT_MS = 2000;
/** What the writer sleeps on between tries: nothing ever wakes it early. */
const PAUSE = new Int32Array(new SharedArrayBuffer(4));

/** Resolved once: the worker loads the same better-sqlite3 this process does. */
const DRIVER = createRequire(import.meta.url).resolve('better-sqlite3');

/** A worker's error as it crossed the thread: better-sqlite3's SqliteError arrives as a plain `{ code }`. */
function whyOf(err: unknown): string {
  const e = err as { message?: unknown; code?: unknown } | null;
  return [e?.code, e?.message].filter((x) => typeof x === 'string' && x !== '').join(': ') || String(err);
}

/** What /metrics shows of the checkpoints. */
export interface CheckpointStatus {
  /** the WAL file's size now */
  walBytes: number;
  /** whether the worker runs and its last pass did not fail */
  workerUp: boolean;
  /** times the writer restarted the WAL itself, having found it past the limit */
  writerRestarts: number;
}

export interface CheckpointerOptions {
  intervalMs?: number;
  /** How long after the worker stopped a new one is started (it stops when its connection cannot open, say). */
  respawnMs?: number;
  /**
   * The worker stopped, or its passes began to fail: checkpoints fall back to
   * the writing thread (slower, still bounded). Once per failure, not per pass
   * or per failed respawn.
   */
  onProblem?: (err: Error) => void;
}

export class Checkpointer {
  private worker: Worker | null = null;
  private exited: Promise<unknown> = Promise.resolve();
  private respawn: NodeJS.Timeout | null = null;
  private readonly wal: string;
  private running = true;
  private passing = true;
  private stopping = false;
  private restarts = 0;

  constructor(
    private readonly path: string,
    /** The WAL's size, in bytes, past which the writer restarts it itself. */
    private readonly limitBytes: number,
    private readonly options: CheckpointerOptions = {},
  ) {
    this.wal = `${path}-wal`;
    this.spawn();
  }

  private problem(why: string): void {
    this.options.onProblem?.(new Error(`SQLite checkpoint worker: ${why}; checkpoints run on the writing thread meanwhile`));
  }

  private spawn(): void {
    this.respawn = null;
    const worker = new Worker(WORKER, {
      eval: true,
      workerData: { path: this.path, wal: this.wal, limitBytes: this.limitBytes, driver: DRIVER, intervalMs: this.options.intervalMs ?? 50 },
    });
    this.worker = worker;
    this.exited = once(worker, 'exit').catch(() => undefined);
    worker.on('message', (m: { ready?: boolean; failed?: string; passing?: boolean }) => {
      if (m.ready) this.running = true;
      this.passing = m.failed === undefined;
      if (m.failed !== undefined) this.problem(`its checkpoints fail (${m.failed})`);
    });
    // A worker that could not start (the file gone, say) costs only the
    // offload: the automatic checkpoint and the writer's bound are still there.
    let why = '';
    worker.on('error', (err: unknown) => {
      why = `it stopped (${whyOf(err)})`;
    });
    worker.on('exit', (code) => {
      this.worker = null;
      if (this.stopping) return;
      if (this.running) this.problem(why || `it exited (code ${code})`);
      this.running = false;
      // Tried again later (a disk that came back): said once, not per try.
      this.respawn = setTimeout(() => this.spawn(), this.options.respawnMs ?? 60_000);
      this.respawn.unref();
    });
    // Never what keeps a process alive: stop() is for an orderly close.
    worker.unref();
  }

  /**
   * After a committed batch, on the writing connection: the hard bound on
   * the WAL. A RESTART cannot start while the worker's pass holds the
   * checkpoint lock (SQLite answers busy at once, without its busy handler),
   * and a pass begun just under the limit may copy for a while; so the
   * writer waits for it, up to `RESTART_WAIT_MS`. Writes that outrun the
   * checkpoints are slowed here rather than growing the WAL without bound.
   */
  afterCommit(db: Database): void {
    if (this.walBytes() <= this.limitBytes) return;
    const deadline = performance.now() + RESTART_WAIT_MS;
    for (;;) {
      try {
        const [r] = db.pragma('wal_checkpoint(RESTART)') as { busy: number }[];
        if (r?.busy === 0) {
          this.restarts++;
          return;
        }
      } catch {
        // The file cannot be written for now: the batch is committed all the same, and the next one tries again.
        return;
      }
      if (performance.now() >= deadline) return;
      Atomics.wait(PAUSE, 0, 0, 2);
    }
  }

  status(): CheckpointStatus {
    return { walBytes: this.walBytes(), workerUp: this.running && this.passing, writerRestarts: this.restarts };
  }

  private walBytes(): number {
    try {
      return statSync(this.wal).size;
    } catch {
      return 0;
    }
  }

  /** Closes the worker's connection before the main one, so the last to close cleans up the WAL. */
  async stop(): Promise<void> {
    this.stopping = true;
    if (this.respawn) clearTimeout(this.respawn);
    const worker = this.worker;
    if (!worker) return;
    worker.postMessage('stop');
    const timeout = setTimeout(() => void worker.terminate(), 2000);
    await this.exited;
    clearTimeout(timeout);
  }
}
