import type { Adapter } from './adapter.js';
import type { OutboxEntry } from '../core/outbox.js';
import type { AdapterConfig } from '../config/adapters.js';
import { createAdapter } from './adapters/index.js';
import type { AdapterDeps } from './adapters/common.js';

/** An adapter with its calls in flight counted, so it can be closed once they are done. */
interface Tracked {
  adapter: Adapter;
  inflight: number;
  retired: boolean;
}

/**
 * The adapters in force. Rebuilt when the config's adapter list changes (a
 * SIGHUP reload); deliveries already fanned out to an adapter that is no
 * longer configured become dead letters that say so. A replaced adapter is
 * closed only once its calls in flight have finished: closing it under them
 * (an MQTT connection ended mid-publish) would turn a delivery that was
 * landing into a failure and a repeat.
 */
export class AdapterRegistry {
  private built: readonly AdapterConfig[] | null = null;
  private adapters = new Map<string, Adapter>();
  /** Every adapter not yet closed: the ones in force and the replaced ones still finishing calls. */
  private readonly open = new Set<Tracked>();
  private inForce: Tracked[] = [];

  constructor(
    private readonly config: () => readonly AdapterConfig[],
    private readonly deps: AdapterDeps,
  ) {}

  current(): ReadonlyMap<string, Adapter> {
    const cfg = this.config();
    if (cfg !== this.built) {
      const old = this.inForce;
      this.inForce = cfg.map((c) => this.track(grouped(createAdapter(c, this.deps), c.grouped === true)));
      this.adapters = new Map(this.inForce.map((t) => [t.adapter.name, this.counted(t)]));
      this.built = cfg;
      for (const t of old) this.retire(t);
    }
    return this.adapters;
  }

  /** How many replaced adapters are still finishing calls (for tests and the curious). */
  get draining(): number {
    return [...this.open].filter((t) => t.retired).length;
  }

  private track(adapter: Adapter): Tracked {
    const t: Tracked = { adapter, inflight: 0, retired: false };
    this.open.add(t);
    return t;
  }

  /** The adapter as the worker calls it: each call counted while it runs. */
  private counted(t: Tracked): Adapter {
    return {
      ...t.adapter,
      deliver: async (job) => {
        t.inflight++;
        try {
          return await t.adapter.deliver(job);
        } finally {
          t.inflight--;
          if (t.retired && t.inflight === 0) void this.closeOne(t);
        }
      },
    };
  }

  private retire(t: Tracked): void {
    t.retired = true;
    if (t.inflight === 0) void this.closeOne(t);
  }

  private async closeOne(t: Tracked): Promise<void> {
    if (!this.open.delete(t)) return;
    await t.adapter.close?.();
  }

  /** Closes every adapter, in force or replaced (the worker has finished its calls by now). */
  async close(): Promise<void> {
    await Promise.all([...this.open].map((t) => this.closeOne(t)));
    this.adapters = new Map();
    this.inForce = [];
    this.built = null;
  }
}

/**
 * A grouped adapter takes groups instead of single incidents, a group as it
 * would take an incident (its kinds, its paging rule); any other adapter
 * takes no `grouping:` group. A route's group (`group_by` on a route) goes
 * to that route's receiver, grouped or not.
 */
function grouped(a: Adapter, takesGroups: boolean): Adapter {
  const accepts = (e: OutboxEntry) =>
    e.kind === 'group'
      ? (takesGroups || e.data.route_group !== undefined) && a.accepts({ ...e, kind: 'incident' })
      : !(takesGroups && e.kind === 'incident') && a.accepts(e);
  return { ...a, accepts };
}
