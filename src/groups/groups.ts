import type { Config } from '../config/schema.js';
import type { Clock } from '../core/clock.js';
import { SEVERITIES } from '../core/fingerprint.js';
import { joinIdentity, sha256Hex } from '../core/identity.js';
import type { OutboxAction, OutboxEntry } from '../core/outbox.js';
import type { GroupSink } from '../delivery/gate/group-stage.js';
import { labelValue } from '../core/matcher.js';
import { labelsOf } from '../inputs/labels.js';
import { groupingNodesOf, routeGroups, routeOf, shortestGroupInterval } from '../delivery/routing.js';
import { type RouteGrouping, type RouteNode, tickAtOrAfter } from '../core/route.js';
import type { GroupRecord, GroupState, GroupStore, IncidentStore } from '../store/contract/index.js';

/** `group:` + the first 32 hex digits of SHA-256 over the `by` values, joined and escaped as an incident key's fields are. */
export const groupKeyOf = (values: readonly string[]) => `group:${sha256Hex(joinIdentity(values)).slice(0, 32)}`;

/**
 * Whether anything groups under `config`: the `grouping:` setting, or a
 * route with `group_by`. While anything does, every change is fanned out to
 * the group line too.
 */
export const groupingActive = (config: Config): boolean => config.grouping !== undefined || routeGroups(config);

/**
 * Where the route groups a member is in are recorded: beside the member's
 * own record (its `grouping:` group), the group keys joined by commas. A
 * dedup key holds no space.
 */
const routesSlot = (member: string) => `${member} routes`;

/** The group key of a route's group: its place in the tree, then its `by` labels and their values. */
const routeGroupKey = (g: RouteGrouping, by: Record<string, string>) => groupKeyOf([g.id, ...Object.entries(by).flat()]);

/** A route group's member joining: the route, and when its alert started (NaN: not an alert that says). */
interface RouteJoin {
  node: RouteNode;
  startedAt: number;
}

/** The highest severity among the members (CRITICAL first). */
export function groupSeverity(members: Record<string, string>): string {
  const present = new Set(Object.values(members));
  return SEVERITIES.find((s) => present.has(s)) ?? 'INFO';
}

/** When a route group is sent again unchanged: a repeat_interval after the tick its last change went out on. */
function repeatDue(g: GroupState): number {
  const t = g.timing!;
  return tickAtOrAfter(g.createdAt, t.waitMs, t.intervalMs, g.changedAt ?? g.createdAt) + t.repeatMs;
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
  change: { member: string; what: 'joined' | 'left' | 'severity' } | { what: 'repeat'; due_at: string };
  /** when this change goes out at the earliest (a repeat written ahead of its tick): its `changedAt` */
  due?: number;
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
  /** when `repeatIfDue` last looked (the applier's clock) */
  private lastLook = -Infinity;

  constructor(private readonly o: { groups: GroupStore; incidents: Pick<IncidentStore, 'get'>; config: () => Config; clock: Clock }) {}

  /** Moves the entry's member into, within or out of its groups; throws when the store could not (the group stage retries). */
  async apply(e: OutboxEntry): Promise<void> {
    if (e.kind !== 'incident') return;
    const config = this.o.config();
    if (config.grouping) await this.applyGrouping(e, config.grouping.by);
    if (routeGroups(config)) await this.applyRoutes(e, config);
  }

  /** The `grouping:` setting's group: one per tenant and `by` values. */
  private async applyGrouping(e: OutboxEntry, by: readonly string[]): Promise<void> {
    if (e.action === 'close') {
      const groupKey = await this.o.groups.memberOf(e.tenant, e.key);
      if (groupKey) await this.leave(e.tenant, groupKey, e.key);
      await this.o.groups.remember(e.tenant, e.key, null);
      return;
    }
    if (e.data.acknowledged === true) return; // an acknowledgement changes neither membership nor severity
    const labels = labelsOf(e);
    const values = by.map((name) => labelValue(labels, name));
    const groupKey = groupKeyOf(values);
    // A `by` label that changed (a severity, a label the producer moved) moves the member: it leaves
    // its old group first, so one incident is never counted in two groups' tickets.
    const before = await this.o.groups.memberOf(e.tenant, e.key);
    if (before && before !== groupKey) await this.leave(e.tenant, before, e.key);
    await this.join(e.tenant, groupKey, Object.fromEntries(by.map((n, i) => [n, values[i]!])), e.key, e.severity);
    // After the commit: a retry of this delivery finds the member in already and writes this again.
    await this.o.groups.remember(e.tenant, e.key, groupKey);
  }

  /**
   * The groups of the routes that group (`group_by`) and take the entry:
   * one per route and `by` values (`...`: the incident alone, with the
   * route's timing). A member leaves the route groups it no longer reaches.
   */
  private async applyRoutes(e: OutboxEntry, config: Config): Promise<void> {
    const slot = routesSlot(e.key);
    const before = ((await this.o.groups.memberOf(e.tenant, slot)) ?? '').split(',').filter(Boolean);
    if (e.action === 'close') {
      for (const groupKey of before) await this.leave(e.tenant, groupKey, e.key);
      if (before.length > 0) await this.o.groups.remember(e.tenant, slot, null);
      return;
    }
    if (e.data.acknowledged === true) return;
    const labels = labelsOf(e);
    const targets = new Map<string, { by: Record<string, string>; node: RouteNode }>();
    for (const node of groupingNodesOf(config, e.tenant, e)) {
      const g = node.grouping!;
      const by = g.by === 'all' ? { key: e.key } : Object.fromEntries(g.by.map((n) => [n, labelValue(labels, n)]));
      targets.set(routeGroupKey(g, by), { by, node });
    }
    for (const groupKey of before) if (!targets.has(groupKey)) await this.leave(e.tenant, groupKey, e.key);
    // An Alertmanager alert that started longer than group_wait ago opens its group at once, as there.
    const startedAt = typeof e.data.startsAt === 'string' ? Date.parse(e.data.startsAt) : Number.NaN;
    for (const [groupKey, t] of targets) await this.join(e.tenant, groupKey, t.by, e.key, e.severity, { node: t.node, startedAt });
    const after = [...targets.keys()];
    if (after.join(',') !== before.join(',')) await this.o.groups.remember(e.tenant, slot, after.length > 0 ? after.join(',') : null);
  }

  private async join(tenant: string, groupKey: string, by: Record<string, string>, member: string, severity: string, route?: RouteJoin): Promise<void> {
    await this.change(tenant, groupKey, (g) => {
      if (g?.members[member] === severity) return null;
      const next: GroupState = g ? { ...g, members: { ...g.members, [member]: severity } } : this.created(tenant, groupKey, by, member, severity, route);
      return { next, action: g ? 'update' : 'create', change: { member, what: g && member in g.members ? 'severity' : 'joined' } };
    });
  }

  /**
   * A new group. A route's group goes to that route's receiver, with the
   * route's timing; a `grouping:` group takes the route its create's labels
   * (its `by` values, severity and kind) reach. Either is kept while it lives.
   */
  private created(tenant: string, groupKey: string, by: Record<string, string>, member: string, severity: string, join?: RouteJoin): GroupState {
    const g: GroupState = { tenant, groupKey, by, members: { [member]: severity }, createdAt: this.o.clock.now() };
    if (join?.node.grouping) {
      const { id, waitMs, intervalMs, repeatMs } = join.node.grouping;
      const waited = join.startedAt + waitMs < g.createdAt; // false for NaN: no start known
      return { ...g, route: [join.node.receiver], timing: { route: id, waitMs: waited ? 0 : waitMs, intervalMs, repeatMs } };
    }
    const route = routeOf(this.o.config(), tenant, this.entry(g, 'create', { member, what: 'joined' }));
    return route ? { ...g, route } : g;
  }

  /** Takes the member out of the group (its record of where it is, the caller's to forget). */
  private async leave(tenant: string, groupKey: string, member: string): Promise<void> {
    await this.change(tenant, groupKey, (g) => {
      if (!g || !(member in g.members)) return null;
      const { [member]: _, ...members } = g.members;
      const change = { member, what: 'left' } as const;
      return Object.keys(members).length === 0 ? { next: null, action: 'close', last: g, change } : { next: { ...g, members }, action: 'update', change };
    });
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
      // A route group keeps when it last changed: its repeat is due a repeat_interval after that change went out.
      const next = d.next?.timing ? { ...d.next, changedAt: Math.max(this.o.clock.now(), d.due ?? 0) } : d.next;
      const shown = next ?? d.last!;
      if (await this.o.groups.commit(tenant, groupKey, g?.version ?? 0, next, this.entry(shown, d.action, d.change))) return;
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
        ...(g.timing
          ? {
              route_group: {
                route: g.timing.route,
                group_wait_ms: g.timing.waitMs,
                group_interval_ms: g.timing.intervalMs,
                repeat_interval_ms: g.timing.repeatMs,
              },
            }
          : {}),
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
    if (!groupingActive(this.o.config())) return 0;
    let left = 0;
    for (const { tenant, groupKey } of await this.o.groups.list(SWEEP_GROUPS)) {
      const g = await this.o.groups.get(tenant, groupKey);
      for (const member of Object.keys(g?.members ?? {})) {
        if (await this.o.incidents.get(tenant, member)) continue;
        await this.leave(tenant, groupKey, member);
        // Gone, so gone from each of its groups: every group it was in is swept the same way.
        await this.o.groups.remember(tenant, g?.timing ? routesSlot(member) : member, null);
        left++;
      }
    }
    return left;
  }

  /**
   * Looks for repeats due (`repeat`) when the last look is older than half
   * the shortest group_interval (at least 1 s, at most a minute apart): a
   * repeat then goes out on the tick Alertmanager would send it on, or the
   * next. Called every second; a look costs a read per group.
   */
  async repeatIfDue(): Promise<number> {
    const every = Math.min(60_000, Math.max(1000, shortestGroupInterval(this.o.config()) / 2));
    const now = this.o.clock.now();
    if (now - this.lastLook < every) return 0;
    this.lastLook = now;
    return this.repeat();
  }

  /**
   * Route groups whose repeat_interval has passed since their last change
   * went out are sent again unchanged (an update marked `repeat`), as
   * Alertmanager re-notifies; the update then waits for the group's next
   * tick like any change. One commit per group: a replica that lost the
   * race finds the repeat written and writes none.
   */
  async repeat(): Promise<number> {
    if (!routeGroups(this.o.config())) return 0;
    let repeated = 0;
    for (const { tenant, groupKey } of await this.o.groups.list(SWEEP_GROUPS)) {
      // Written up to a group_interval ahead, marked with when it is due: its hold lets it out on the
      // first tick at or after that, where a repeat written after the due time would miss that tick.
      const due = (x: GroupState | null) => (x?.timing && this.o.clock.now() >= repeatDue(x) - x.timing.intervalMs ? repeatDue(x) : null);
      const g = await this.o.groups.get(tenant, groupKey);
      if (due(g) === null) continue;
      await this.change(tenant, groupKey, (cur) => {
        const at = due(cur);
        if (!cur || at === null) return null;
        const { version: _, ...state } = cur as GroupRecord;
        return { next: state, action: 'update', change: { what: 'repeat', due_at: new Date(at).toISOString() }, due: at };
      });
      repeated++;
    }
    return repeated;
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
