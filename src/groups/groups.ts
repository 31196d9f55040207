import type { Config } from '../config/schema.js';
import type { Clock } from '../core/clock.js';
import { SEVERITIES } from '../core/fingerprint.js';
import { joinIdentity, sha256Hex } from '../core/identity.js';
import type { OutboxAction, OutboxEntry } from '../core/outbox.js';
import type { GroupSink } from '../delivery/gate/group-stage.js';
import { labelValue } from '../core/matcher.js';
import { labelsOf } from '../inputs/labels.js';
import { routeOf } from '../delivery/routing.js';
import type { GroupState, GroupStore, IncidentStore } from '../store/contract/index.js';

/** `group:` + the first 32 hex digits of SHA-256 over the `by` values, joined and escaped as an incident key's fields are. */
export const groupKeyOf = (values: readonly string[]) => `group:${sha256Hex(joinIdentity(values)).slice(0, 32)}`;

/** The highest severity among the members (CRITICAL first). */
export function groupSeverity(members: Record<string, string>): string {
  const present = new Set(Object.values(members));
  return SEVERITIES.find((s) => present.has(s)) ?? 'INFO';
}

/** Conflicting commits tried before the delivery is left to be retried (only other replicas conflict: see `serial`). */
const MAX_TRIES = 50;
/**
 * Members a group's delivery lists (the first, sorted); `member_count` says
 * how many there are, and GET /v1/groups/{key} lists them all. Each change
 * used to send the whole list: 1,000 members made every update carry 1,000
 * keys, and a batch of joins a quadratic volume.
 */
export const MEMBERS_SENT = 100;
/** Member reads GET /v1/groups/{key} has in flight at once. */
const VIEW_READS = 64;
/** Groups the expiry sweep looks at per pass. */
const SWEEP_GROUPS = 1000;

/** A group change decided: the next state (null: gone), its action, and which member changed how. */
interface Decided {
  next: GroupState | null;
  action: OutboxAction;
  last?: GroupState;
  change: { member: string; what: 'joined' | 'left' | 'severity' };
}

/**
 * Groups of incidents. Every incident create, update and close is already an
 * outbox entry written in its decision's atomic step; the delivery gate's
 * group stage hands each one to this applier on a line of its own, one key
 * at a time, oldest first, retried until it lands. The applier moves the member
 * into, within or out of its group with one `commit` (the group's next state
 * and its outbox entry together, only if nobody changed the group since it
 * was read: a conflict reads again), so two replicas applying members of one
 * group at once lose neither, and a retry of a change that landed finds the
 * group already so and writes nothing.
 */
export class GroupApplier implements GroupSink {
  /** One change at a time per group in this replica: its own calls never conflict with each other. */
  private readonly serial = new Map<string, Promise<void>>();

  constructor(private readonly o: { groups: GroupStore; incidents: Pick<IncidentStore, 'get'>; config: () => Config; clock: Clock }) {}

  /** Moves the entry's member into, within or out of its group; throws when the store could not (the group stage retries). */
  async apply(e: OutboxEntry): Promise<void> {
    const c = this.o.config().grouping;
    if (!c || e.kind !== 'incident') return;
    if (e.action === 'close') {
      const groupKey = await this.o.groups.memberOf(e.tenant, e.key);
      if (groupKey) await this.leave(e.tenant, groupKey, e.key);
      return;
    }
    if (e.data.acknowledged === true) return; // an acknowledgement changes neither membership nor severity
    const labels = labelsOf(e);
    const values = c.by.map((name) => labelValue(labels, name));
    const groupKey = groupKeyOf(values);
    // A `by` label that changed (a severity, a label the producer moved) moves the member: it leaves
    // its old group first, so one incident is never counted in two groups' tickets.
    const before = await this.o.groups.memberOf(e.tenant, e.key);
    if (before && before !== groupKey) await this.leave(e.tenant, before, e.key);
    await this.join(e.tenant, groupKey, Object.fromEntries(c.by.map((n, i) => [n, values[i]!])), e.key, e.severity);
  }

  private async join(tenant: string, groupKey: string, by: Record<string, string>, member: string, severity: string): Promise<void> {
    await this.change(tenant, groupKey, (g) => {
      if (g?.members[member] === severity) return null;
      const next: GroupState = g ? { ...g, members: { ...g.members, [member]: severity } } : this.created(tenant, groupKey, by, member, severity);
      return { next, action: g ? 'update' : 'create', change: { member, what: g && member in g.members ? 'severity' : 'joined' } };
    });
    // After the commit: a retry of this delivery finds the member in already and writes this again.
    await this.o.groups.remember(tenant, member, groupKey);
  }

  /** A new group, with the route its create takes by its labels (its `by` values, severity and kind) and kept while it lives. */
  private created(tenant: string, groupKey: string, by: Record<string, string>, member: string, severity: string): GroupState {
    const g: GroupState = { tenant, groupKey, by, members: { [member]: severity }, createdAt: this.o.clock.now() };
    const route = routeOf(this.o.config(), tenant, this.entry(g, 'create', { member, what: 'joined' }));
    return route ? { ...g, route } : g;
  }

  private async leave(tenant: string, groupKey: string, member: string): Promise<void> {
    await this.change(tenant, groupKey, (g) => {
      if (!g || !(member in g.members)) return null;
      const { [member]: _, ...members } = g.members;
      const change = { member, what: 'left' } as const;
      return Object.keys(members).length === 0 ? { next: null, action: 'close', last: g, change } : { next: { ...g, members }, action: 'update', change };
    });
    await this.o.groups.remember(tenant, member, null);
  }

  /** Reads, decides, commits; again on a conflict. `decide` answers null when the group is already as it should be. */
  private change(tenant: string, groupKey: string, decide: (g: GroupState | null) => Decided | null): Promise<void> {
    const id = `${tenant}\u0000${groupKey}`;
    const run = (this.serial.get(id) ?? Promise.resolve()).catch(() => {}).then(() => this.commitLoop(tenant, groupKey, decide));
    this.serial.set(id, run);
    void run
      .finally(() => {
        if (this.serial.get(id) === run) this.serial.delete(id);
      })
      .catch(() => {});
    return run;
  }

  private async commitLoop(tenant: string, groupKey: string, decide: (g: GroupState | null) => Decided | null): Promise<void> {
    for (let i = 0; i < MAX_TRIES; i++) {
      const g = await this.o.groups.get(tenant, groupKey);
      const d = decide(g);
      if (!d) return;
      const shown = d.next ?? d.last!;
      if (await this.o.groups.commit(tenant, groupKey, g?.version ?? 0, d.next, this.entry(shown, d.action, d.change))) return;
    }
    throw new Error(`group ${groupKey} kept changing under ${MAX_TRIES} tries`);
  }

  /** What a grouped adapter receives: the group's key, its highest severity, its member count, the first members, and the change. */
  private entry(g: GroupState, action: OutboxAction, change: Decided['change']): OutboxEntry {
    const members = Object.keys(g.members).sort();
    const sent = members.slice(0, MEMBERS_SENT);
    const by = Object.entries(g.by)
      .map(([k, v]) => `${k}=${v}`)
      .join(' ');
    return {
      tenant: g.tenant,
      kind: 'group',
      action,
      key: g.groupKey,
      severity: groupSeverity(g.members),
      summary: action === 'close' ? `group ${by}: every member closed` : `${members.length} incident${members.length === 1 ? '' : 's'}: ${by}`,
      data: {
        ...g.by,
        group_key: g.groupKey,
        by: g.by,
        members: sent,
        member_count: members.length,
        ...(sent.length < members.length ? { members_truncated: true } : {}),
        change,
        created_at: new Date(g.createdAt).toISOString(),
      },
      at: this.o.clock.now(),
      ...(g.route ? { route: g.route } : {}),
    };
  }

  /**
   * Members that expired without a close (their store forgets them on its
   * own) leave their groups; run with the sweeper. One read per member.
   */
  async sweep(): Promise<number> {
    if (!this.o.config().grouping) return 0;
    let left = 0;
    for (const { tenant, groupKey } of await this.o.groups.list(SWEEP_GROUPS)) {
      const g = await this.o.groups.get(tenant, groupKey);
      for (const member of Object.keys(g?.members ?? {})) {
        if (await this.o.incidents.get(tenant, member)) continue;
        await this.leave(tenant, groupKey, member);
        left++;
      }
    }
    return left;
  }

  /** A group as GET /v1/groups/{group_key} shows it: only its live members; null when none is. */
  async view(tenant: string, groupKey: string) {
    const g = await this.o.groups.get(tenant, groupKey);
    if (!g) return null;
    const live: Record<string, string> = {};
    // Read a chunk at a time, in parallel: one read after another made 1,000 members take seconds.
    const all = Object.entries(g.members);
    for (let i = 0; i < all.length; i += VIEW_READS) {
      const chunk = all.slice(i, i + VIEW_READS);
      const found = await Promise.all(chunk.map(([m]) => this.o.incidents.get(tenant, m)));
      chunk.forEach(([m, s], j) => {
        if (found[j]) live[m] = s;
      });
    }
    if (Object.keys(live).length === 0) return null;
    return {
      group_key: g.groupKey,
      by: g.by,
      members: Object.keys(live).sort(),
      severity: groupSeverity(live),
      created_at: new Date(g.createdAt).toISOString(),
    };
  }
}
