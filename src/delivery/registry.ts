import type { Adapter } from './adapter.js';
import type { AdapterConfig } from '../config/adapters.js';
import { createAdapter } from './adapters/index.js';
import type { AdapterDeps } from './adapters/common.js';

/**
 * The adapters in force. Rebuilt when the config's adapter list changes (a
 * SIGHUP reload), closing the old ones; deliveries already fanned out to an
 * adapter that is no longer configured become dead letters that say so.
 */
export class AdapterRegistry {
  private built: readonly AdapterConfig[] | null = null;
  private adapters = new Map<string, Adapter>();

  constructor(
    private readonly config: () => readonly AdapterConfig[],
    private readonly deps: AdapterDeps,
  ) {}

  current(): ReadonlyMap<string, Adapter> {
    const cfg = this.config();
    if (cfg !== this.built) {
      const old = [...this.adapters.values()];
      this.adapters = new Map(cfg.map((c) => [c.name, createAdapter(c, this.deps)]));
      this.built = cfg;
      for (const a of old) void a.close?.();
    }
    return this.adapters;
  }

  async close(): Promise<void> {
    await Promise.all([...this.adapters.values()].map((a) => a.close?.()));
    this.adapters = new Map();
    this.built = null;
  }
}
