import type { OutboxEntry } from '../../core/outbox.js';

/**
 * The groups facet: incidents of one tenant that share the `grouping.by`
 * values, kept as one record per group, and which group each member is in.
 * A group changes only by `commit`: one atomic step that writes the group's
 * next state and its outbox entry together, and only if nobody changed the
 * group since it was read (its version), so concurrent members joining from
 * several replicas never lose one another and each change is delivered once.
 */
export interface GroupRecord {
  tenant: string;
  groupKey: string;
  /** the `by` values that make the group */
  by: Record<string, string>;
  /** member dedup key → its severity */
  members: Record<string, string>;
  /** ms, the applier's clock: when the first member joined */
  createdAt: number;
  /** the adapters the group's create was routed to, by its labels then (absent: every adapter); its changes follow it */
  route?: readonly string[];
  /** a route's group (`group_by` on a route): that route's place in the tree and its timing, as when the group was made */
  timing?: { route: string; waitMs: number; intervalMs: number; repeatMs: number };
  /** ms, the applier's clock: a route group's last change (its repeat is counted from the tick that change went out on) */
  changedAt?: number;
  /** bumped by every commit; 0 means "no such group" */
  version: number;
}

export type GroupState = Omit<GroupRecord, 'version'>;

export interface GroupStore {
  get(tenant: string, groupKey: string): Promise<GroupRecord | null>;
  /**
   * One atomic step: when the group's version is still `expected` (0: there
   * is none), writes `next` (null: deletes the group) and appends `entry` to
   * the outbox; otherwise changes nothing and answers false.
   */
  commit(tenant: string, groupKey: string, expected: number, next: GroupState | null, entry: OutboxEntry | null): Promise<boolean>;
  /** The group a member was last recorded in, or null. */
  memberOf(tenant: string, member: string): Promise<string | null>;
  /** Records (or, with null, forgets) the group a member is in. */
  remember(tenant: string, member: string, groupKey: string | null): Promise<void>;
  /** Up to `limit` groups of every tenant (the sweep that removes expired members walks them). */
  list(limit: number): Promise<Array<{ tenant: string; groupKey: string }>>;
}
