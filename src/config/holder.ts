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

  constructor(
    initial: Config = defaultConfig,
    readonly path?: string,
  ) {
    this.value = initial;
    this.started = initial;
  }

  static fromFile(path: string | undefined): ConfigHolder {
    return new ConfigHolder(path ? loadConfigFile(path) : defaultConfig, path);
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
    const next = loadConfigFile(this.path);
    this.guard(next);
    this.value = next;
    return next;
  }
}
