import type { OutboxEntry } from '../../core/outbox.js';
import type { GroupRecord, GroupState, GroupStore } from '../contract/index.js';

const idOf = (tenant: string, key: string) => `${tenant}\u0000${key}`;

/** Groups in memory; each call runs to completion synchronously (its atomic step). */
export class MemoryGroups implements GroupStore {
  private readonly groups = new Map<string, GroupRecord>();
  private readonly members = new Map<string, string>();

  constructor(
    private readonly outbox: OutboxEntry[],
    private readonly assertOpen: () => void,
  ) {}

  async get(tenant: string, groupKey: string) {
    this.assertOpen();
    const g = this.groups.get(idOf(tenant, groupKey));
    return g ? structuredClone(g) : null;
  }

  async commit(tenant: string, groupKey: string, expected: number, next: GroupState | null, entry: OutboxEntry | null) {
    this.assertOpen();
    const id = idOf(tenant, groupKey);
    const version = this.groups.get(id)?.version ?? 0;
    if (version !== expected) return false;
    if (entry) JSON.stringify(entry.data);
    if (next) this.groups.set(id, { ...structuredClone(next), version: version + 1 });
    else this.groups.delete(id);
    if (entry) this.outbox.push(entry);
    return true;
  }

  async memberOf(tenant: string, member: string) {
    this.assertOpen();
    return this.members.get(idOf(tenant, member)) ?? null;
  }

  async remember(tenant: string, member: string, groupKey: string | null) {
    this.assertOpen();
    if (groupKey) this.members.set(idOf(tenant, member), groupKey);
    else this.members.delete(idOf(tenant, member));
  }

  async list(limit: number) {
    this.assertOpen();
    return [...this.groups.values()].slice(0, limit).map((g) => ({ tenant: g.tenant, groupKey: g.groupKey }));
  }
}
