import { systemClock, type Clock } from '../core/clock.js';
import { defaultConfig, type Config } from './schema.js';
import { loadConfigFile } from './load.js';
import { startOnlyChanged } from './start-only.js';

/**
 * Holds the config in force. A reload parses and validates the whole new file
 * first and then swaps one reference, so a decision in flight sees the old
 * config or the new one, never a mixture, and a bad file changes nothing.
 */
export class ConfigHolder {
  private value: Config;
  private readonly started: Config;
  /** Extra rules a running server puts on a reload (e.g. a public bind needs tenants); throws to refuse. */
  guard: (next: Config) => void = () => {};
  /** Reloads taken and refused since start, and when the config in force was last loaded (ms; the start's load counts): for metrics. */
  readonly reloads = { taken: 0, refused: 0, lastLoadedAt: 0 };

  constructor(
    initial: Config = defaultConfig,
    readonly path?: string,
    private readonly clock: Clock = systemClock,
  ) {
    this.value = initial;
    this.started = initial;
    this.reloads.lastLoadedAt = clock.now();
  }

  static fromFile(path: string | undefined, clock?: Clock): ConfigHolder {
    return new ConfigHolder(path ? loadConfigFile(path) : defaultConfig, path, clock);
  }

  get current(): Config {
    return this.value;
  }

  /** The fields read only at start whose value in force differs from the one the server started with: they act after a restart. */
  get restartPending(): string[] {
    return startOnlyChanged(this.started, this.value);
  }

  /** Re-reads the file; throws (and keeps the old config) when it is bad. */
  reload(): Config {
    if (!this.path) return this.value;
    let next: Config;
    try {
      next = loadConfigFile(this.path);
      this.guard(next);
    } catch (err) {
      this.reloads.refused++;
      throw err;
    }
    this.value = next;
    this.reloads.taken++;
    this.reloads.lastLoadedAt = this.clock.now();
    return next;
  }
}
