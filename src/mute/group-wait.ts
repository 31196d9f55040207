import type { GroupingConfig } from '../config/holds.js';
import type { Delivery } from '../store/contract/index.js';
import type { HoldSource, HoldVerdict } from './holds.js';

/**
 * A group's create waits `wait_seconds` after its first member, so that a
 * storm arrives as one ticket. A hold like auto-pause's, beside them here;
 * the group applier (groups/groups.ts) only makes the groups.
 */
export class GroupWait implements HoldSource {
  constructor(private readonly config: () => GroupingConfig | undefined) {}

  async verdict(d: Delivery, now: number): Promise<HoldVerdict> {
    const c = this.config();
    if (!c || d.entry.kind !== 'group' || d.entry.action !== 'create') return null;
    const until = Date.parse(String(d.entry.data.created_at)) + c.wait_seconds * 1000;
    return Number.isFinite(until) && now < until ? { hold: { by: 'group_wait', id: d.entry.key, until } } : null;
  }
}
