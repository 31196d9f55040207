import type { GroupingConfig } from '../config/holds.js';
import { tickAtOrAfter } from '../core/route.js';
import type { Delivery } from '../store/contract/index.js';
import type { HoldSource, HoldVerdict } from './holds.js';

/** A route group's timing as its deliveries carry it (`data.route_group`). */
interface RouteTiming {
  group_wait_ms: number;
  group_interval_ms: number;
}

const routeTiming = (data: Record<string, unknown>): RouteTiming | null => {
  const t = data.route_group as Partial<RouteTiming> | undefined;
  return t && Number.isFinite(t.group_wait_ms) && Number(t.group_interval_ms) > 0 ? (t as RouteTiming) : null;
};

/**
 * A group's notifications wait, as Alertmanager's do, so that a storm
 * arrives as one ticket:
 * - a route group's create waits its route's group_wait after its first
 *   member; each later change waits for the group's next tick (one every
 *   group_interval from the first notification), and what queued meanwhile
 *   goes out with it as one;
 * - a `grouping:` group's create waits `wait_seconds`.
 * Holds like auto-pause's, beside them here; the group applier
 * (groups/groups.ts) only makes the groups.
 */
export class GroupWait implements HoldSource {
  constructor(private readonly config: () => GroupingConfig | undefined) {}

  async verdict(d: Delivery, now: number): Promise<HoldVerdict> {
    if (d.entry.kind !== 'group') return null;
    const created = Date.parse(String(d.entry.data.created_at));
    const t = routeTiming(d.entry.data);
    if (t) {
      const first = d.entry.action === 'create';
      // A repeat is written ahead of when it is due, and goes on the first tick at or after that.
      const due = Date.parse(String((d.entry.data.change as { due_at?: unknown } | undefined)?.due_at));
      const from = Number.isFinite(due) ? Math.max(due, d.entry.at) : d.entry.at;
      const until = first ? created + t.group_wait_ms : tickAtOrAfter(created, t.group_wait_ms, t.group_interval_ms, from);
      return Number.isFinite(until) && now < until ? { hold: { by: first ? 'group_wait' : 'group_interval', id: d.entry.key, until } } : null;
    }
    const c = this.config();
    if (!c || d.entry.action !== 'create') return null;
    const until = created + c.wait_seconds * 1000;
    return Number.isFinite(until) && now < until ? { hold: { by: 'group_wait', id: d.entry.key, until } } : null;
  }
}
