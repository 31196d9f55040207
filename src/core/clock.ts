/**
 * All time in onceonly comes through a Clock so that tests can move past a TTL
 * or a retention window without sleeping. Milliseconds since the Unix epoch.
 */
export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

/** A clock that only moves when told to: for tests and simulations. */
export interface ManualClock extends Clock {
  advance(ms: number): void;
  set(ms: number): void;
}

export function manualClock(startMs = Date.UTC(2026, 0, 1)): ManualClock {
  let t = startMs;
  return {
    now: () => t,
    advance(ms: number) {
      if (!Number.isFinite(ms) || ms < 0) throw new RangeError(`a clock only moves forward, got ${ms}`);
      t += ms;
    },
    set(ms: number) {
      t = ms;
    },
  };
}

/**
 * A clock that follows a store server's clock: this host's time plus an
 * offset measured against the server (half the round trip taken off), and
 * measured again every `everyMs`. A replica whose host clock is wrong still
 * decides, leases and sweeps on the store's time, as Redis's scripts do with
 * its `TIME`. Between two measurements it moves with this host's clock; a
 * small correction backwards is absorbed (time holds still until it catches
 * up), a large one (the first measurement, or a host clock that jumped) is
 * taken at once.
 */
export class ServerClock implements Clock {
  private offset = 0;
  private last = Number.NEGATIVE_INFINITY;
  private timer: ReturnType<typeof setInterval> | null = null;
  /** The shortest round trip a kept measurement took: the path's own speed. */
  private bestRttMs = Number.POSITIVE_INFINITY;
  /** Measurements set aside in a row as too slow to trust. */
  private setAside = 0;
  /** Corrections backwards up to this are absorbed rather than stepped. */
  static readonly ABSORB_MS = 1000;
  /**
   * A measurement is off by up to half its round trip. One taken across an
   * outage (sent into a black hole, answered 2 s later) would put this
   * replica's time 1 s ahead of its peers', and it would lease a delivery a
   * receiver's Retry-After still forbids. So a round trip longer than twice
   * the best seen, plus this slack, is set aside and the last offset kept.
   */
  static readonly RTT_SLACK_MS = 50;
  /** After this many set aside in a row the path itself has slowed: the next is kept, and sets the new best. */
  static readonly MAX_SET_ASIDE = 12;

  constructor(private readonly local: Clock = systemClock) {}

  // A property, not a method: a Clock's `now` is handed around on its own (an adapter's HTTP call
  // reads Retry-After dates with it), and a method would lose its `this` there.
  readonly now = (): number => {
    const t = this.local.now() + this.offset;
    if (t >= this.last || this.last - t > ServerClock.ABSORB_MS) this.last = t;
    return this.last;
  };

  /** The offset this clock keeps from the host's (ms): what the host's clock is wrong by, as the server sees it. */
  get offsetMs(): number {
    return this.offset;
  }

  /** Measures the offset once against `serverNow` (the server's time in ms); false if the answer came too slowly to trust. */
  async measure(serverNow: () => Promise<number>): Promise<boolean> {
    const before = this.local.now();
    const server = await serverNow();
    const after = this.local.now();
    const rtt = after - before;
    if (rtt > 2 * this.bestRttMs + ServerClock.RTT_SLACK_MS && this.setAside < ServerClock.MAX_SET_ASIDE) {
      this.setAside++;
      return false;
    }
    this.bestRttMs = this.setAside >= ServerClock.MAX_SET_ASIDE ? rtt : Math.min(this.bestRttMs, rtt);
    this.setAside = 0;
    // Whole milliseconds: the stores keep times as integers.
    this.offset = Math.round(server + rtt / 2 - after);
    return true;
  }

  /** Measures now, then every `everyMs` until stopped; a failed measurement keeps the last offset. */
  async follow(serverNow: () => Promise<number>, everyMs = 5000, onError?: (err: unknown) => void): Promise<void> {
    await this.measure(serverNow);
    this.stop();
    this.timer = setInterval(() => this.measure(serverNow).catch((err) => onError?.(err)), everyMs);
    this.timer.unref?.();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }
}
