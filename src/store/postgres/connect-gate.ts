import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { StoreUnavailableError } from '../errors.js';

/** How long opening one connection may take before the pool gives it up. */
export const CONNECT_TIMEOUT_MS = 5000;

/**
 * Paces new connections to Postgres once one has failed.
 *
 * The pool opens a connection for every query that finds none idle. While
 * the server's port refuses (a restart, a failover, a proxy that lost its
 * backend), every such query is one more attempt: with ten connections per
 * replica and the probes, the background loops and the requests in flight,
 * a refusing port drew ninety connection attempts in five seconds from one
 * replica. The Redis client paces its one connection with a backoff; this is
 * the same for the pool: after a failure, one attempt at a time and no
 * sooner than the backoff (100 ms doubling to 1 s) allows. A query that
 * arrives meanwhile fails at once as "unreachable", which is what fail-open
 * acts on; the first success opens the gate for everyone again.
 *
 * An attempt that failed only because it ran out of time (the pool's connect
 * timeout) does not shut the gate: it has already waited that long, so it
 * paces itself, and on a busy machine a starved event loop or a slow backend
 * start is what produces it. Shutting on it would fail every other query at
 * once while the connections already open answer well.
 *
 * Time here is the monotonic clock, not the service's injected one: it paces
 * sockets, as the Redis client's reconnect strategy does, and a test clock
 * that stands still must not keep the store shut.
 */
export class ConnectGate {
  private failures = 0;
  private notBefore = 0;
  private trying = false;

  constructor(
    private readonly now: () => number = () => performance.now(),
    readonly minMs = 100,
    readonly maxMs = 1000,
    /** The pool's connect timeout: an attempt that failed this late timed out. */
    readonly timeoutMs = CONNECT_TIMEOUT_MS,
  ) {}

  /** Whether a connection may be opened now; when it may, the caller must report how it went. */
  admit(): { ok: true; done: (err: unknown) => void } | { ok: false; waitMs: number } {
    const started = this.now();
    if (this.failures === 0) return { ok: true, done: (err) => this.report(err, false, started) };
    const waitMs = Math.ceil(this.notBefore - started);
    if (this.trying || waitMs > 0) return { ok: false, waitMs: Math.max(waitMs, 0) };
    this.trying = true;
    return { ok: true, done: (err) => this.report(err, true, started) };
  }

  private report(err: unknown, trial: boolean, started: number): void {
    if (trial) this.trying = false;
    if (err && this.now() - started >= this.timeoutMs) return;
    if (!err) {
      this.failures = 0;
      return;
    }
    this.failures++;
    this.notBefore = this.now() + Math.min(this.maxMs, this.minMs * 2 ** Math.min(this.failures - 1, 16));
  }
}

type Connected = ((err: Error) => void) | ((err: null, c: pg.Client) => void);

/** A pg.Client class whose connections all pass through `gate`. */
export function gatedClient(gate: ConnectGate): typeof pg.Client {
  class GatedClient extends pg.Client {
    override connect(): Promise<pg.Client>;
    override connect(callback: Connected): void;
    override connect(callback?: Connected): Promise<pg.Client> | undefined {
      const entry = gate.admit();
      const attempt: Promise<pg.Client> = entry.ok
        ? super.connect().then(
            (c) => {
              entry.done(null);
              return c;
            },
            (e: unknown) => {
              entry.done(e);
              throw e;
            },
          )
        : Promise.reject(
            new StoreUnavailableError(`Postgres is unreachable: the last connection attempt failed; the next one is allowed in ${entry.waitMs} ms`),
          );
      if (!callback) return attempt;
      const cb = callback as (err: Error | null, c?: pg.Client) => void;
      attempt.then((c) => cb(null, c), cb);
      return undefined;
    }
  }
  return GatedClient;
}
