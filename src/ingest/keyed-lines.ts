/**
 * Runs tasks side by side, at most `width` at a time, and those of one key
 * one after another in the order they were admitted: a broker's messages of
 * one incident or device are decided in the order the broker handed them
 * out, messages of different keys at once. A task waiting on its key's line
 * counts toward `width` (it holds a message not yet acknowledged).
 */
export class KeyedLines<T> {
  private readonly tails = new Map<string, Promise<void>>();
  private readonly running = new Set<Promise<void>>();

  constructor(
    private readonly width: number,
    /** the task's line, or null for a task that needs none */
    private readonly keyOf: (task: T) => string | null,
    /** runs one task; it must not throw (a rejection is swallowed so the line goes on) */
    private readonly run: (task: T) => Promise<void>,
  ) {
    if (!Number.isInteger(width) || width < 1) throw new RangeError(`width must be a whole number of at least 1, not ${width}`);
  }

  /** Starts `task` behind its line; first waits while `width` tasks are in flight. */
  async admit(task: T): Promise<void> {
    while (this.running.size >= this.width) await Promise.race(this.running);
    const key = this.keyOf(task);
    const before = key === null ? undefined : this.tails.get(key);
    const started = before ? before.then(() => this.run(task)) : this.run(task);
    const done: Promise<void> = started
      .catch(() => undefined)
      .finally(() => {
        this.running.delete(done);
        if (key !== null && this.tails.get(key) === done) this.tails.delete(key);
      });
    if (key !== null) this.tails.set(key, done);
    this.running.add(done);
  }

  /** Tasks admitted and not finished. */
  get size(): number {
    return this.running.size;
  }

  /** Resolves once every admitted task has finished. */
  async idle(): Promise<void> {
    while (this.running.size > 0) await Promise.all(this.running);
  }
}
