import { performance } from 'node:perf_hooks';
import { StoreTimeoutError } from '../errors.js';

/** How often the meter looks at the loop: the resolution of what it can tell apart. */
const TICK_MS = 10;

/**
 * How long this process's event loop could not run: summed lateness of a
 * 10 ms ticker. A ticker that fires 180 ms late means that for 180 ms
 * nothing here ran: the operating system gave the CPU to others, or the
 * loop was busy with other work. A reply the store sent meanwhile waited
 * unread in the socket, so that time is not the store's.
 */
export class LoopStalls {
  private total = 0;
  private last = performance.now();
  private readonly timer: NodeJS.Timeout;

  constructor() {
    this.timer = setInterval(() => {
      const now = performance.now();
      this.total += Math.max(0, now - this.last - TICK_MS);
      this.last = now;
    }, TICK_MS);
    this.timer.unref();
  }

  /** Milliseconds stalled since the meter started, including a stall still going on (the ticker has not run yet). */
  now(): number {
    return this.total + Math.max(0, performance.now() - this.last - TICK_MS);
  }

  /**
   * Stops the ticker. From then on the time since its last tick reads as one
   * growing stall, so a deadline still running never comes due: a closed
   * replica's calls in flight wait for their own answers and take no local
   * path, as a stopped process's would. Whoever closes must not wait on them
   * unboundedly (FailOpenStore.close bounds its wait for a probe).
   */
  stop(): void {
    clearInterval(this.timer);
  }
}

/**
 * `p`, or a StoreTimeoutError once the store has had `ms` of its own time to
 * answer: wall time since the call, less what the loop stalled meanwhile.
 * Before judging, it lets the loop read what already arrived (the poll phase
 * runs before setImmediate's), so a reply sitting in the socket when a late
 * timer fires is taken, not blamed.
 */
export function storeDeadline<T>(p: Promise<T>, ms: number, stalls: LoopStalls, what = 'store'): Promise<T> {
  const start = performance.now();
  const stalled0 = stalls.now();
  return new Promise<T>((resolve, reject) => {
    let settled = false;
    let timer: NodeJS.Timeout | null = null;
    const judge = () =>
      setImmediate(() => {
        if (settled) return;
        const used = performance.now() - start - (stalls.now() - stalled0);
        if (used >= ms) {
          settled = true;
          reject(new StoreTimeoutError(`${what} did not answer within ${ms} ms of its own time (${Math.round(performance.now() - start)} ms in all)`));
        } else {
          timer = setTimeout(judge, Math.max(1, ms - used));
        }
      });
    timer = setTimeout(judge, ms);
    p.then(
      (v) => {
        settled = true;
        if (timer) clearTimeout(timer);
        resolve(v);
      },
      (err: unknown) => {
        settled = true;
        if (timer) clearTimeout(timer);
        reject(err);
      },
    );
  });
}
