import type { Clock } from '../../core/clock.js';
import type { Deduplicator } from '../../engine/deduplicator.js';
import type { IncidentView } from '../../engine/views.js';
import type { DeviceView, EventIngest } from '../../engine/events.js';
import type { EventAccounting, EventStats } from '../../observe/event-accounting.js';
import type { DecisionTally, Tally } from '../../observe/decision-tally.js';
import type { DeliveryTally, DeliveryTotals } from '../../observe/delivery-tally.js';
import type { DeliveryStore, Silence } from '../../store/contract/index.js';
import { silenceState } from '../../store/contract/index.js';
import { silenceView } from '../routes/silences.js';
import { deadLetterView } from '../routes/dead-letters.js';
import { heartbeatView } from '../routes/heartbeats.js';
import type { HeartbeatMonitor } from '../../heartbeats/heartbeats.js';

export interface DashboardDeps {
  dedup: Deduplicator;
  tally: DecisionTally;
  events: EventIngest;
  accounting: EventAccounting;
  deliveries: DeliveryStore;
  deliveryTally: DeliveryTally;
  /** This replica's copy of the silences (the cache), not the store: a snapshot a second per stream must not reread them all. */
  silences: { list(tenant: string): Promise<readonly Silence[]> };
  clock: Clock;
  heartbeats: Pick<HeartbeatMonitor, 'list'>;
}

export interface Snapshot {
  at: string;
  tenant: string;
  decisions: Tally;
  incidents: Array<IncidentView & { age_seconds: number }>;
  devices: Array<DeviceView & { gaps: number }>;
  events: EventStats & { invariant_holds: boolean };
  delivery: {
    /** This tenant's settled deliveries by adapter and outcome, since this replica started. */
    adapters: DeliveryTotals;
    /** The queue across tenants: only on a dashboard without tenants (null with tenants, as it would show others' volume). */
    pending: number | null;
    /** This tenant's dead letters (up to 1,000). */
    dead: number | null;
    /** Deliveries a mute holds now, across tenants: only without tenants, as `pending`. */
    held: number | null;
    /** Holds this replica started for the tenant (all tenants without tenants), by what held them (mute/kinds.ts: HELD_BY). */
    holds: Record<string, number>;
    lag_seconds: number | null;
  };
  dead_letters: ReturnType<typeof deadLetterView>[];
  /**
   * This tenant's silences in force or to come: the first 50 (in force first, soonest to end first),
   * each with its first 8 matchers (`more_matchers` counts the rest) and text cut at 200 characters.
   * The API lists them whole, and ended ones too.
   */
  silences: Array<ReturnType<typeof silenceView> & { more_matchers?: number }>;
  /** How many silences are in force or to come, shown or not. */
  silences_total: number;
  /** This tenant's heartbeats: last ping and state. */
  heartbeats: ReturnType<typeof heartbeatView>[];
}

const sum = (r: Record<string, number>) => Object.values(r).reduce((a, b) => a + b, 0);

/** Silences a snapshot lists, and the characters it shows of a matcher value or a comment: a snapshot goes to every stream every second. */
const SILENCES_SHOWN = 50;
const MATCHERS_SHOWN = 8;
const TEXT_SHOWN = 200;
const cut = (t: string) => (t.length > TEXT_SHOWN ? `${t.slice(0, TEXT_SHOWN)}…` : t);

/** Silences in force first, then those to come; each by its end. */
function shownSilences(all: readonly Silence[], now: number) {
  const unended = all.filter((x) => silenceState(x, now) !== 'expired');
  const rank = (x: Silence) => (silenceState(x, now) === 'active' ? 0 : 1);
  const shown = [...unended]
    .sort((a, b) => rank(a) - rank(b) || a.endsAt - b.endsAt)
    .slice(0, SILENCES_SHOWN)
    .map((x) => {
      const v = silenceView(x, now);
      const more = v.matchers.length - MATCHERS_SHOWN;
      return {
        ...v,
        matchers: v.matchers.slice(0, MATCHERS_SHOWN).map((m) => ({ ...m, value: cut(m.value) })),
        ...(more > 0 ? { more_matchers: more } : {}),
        createdBy: cut(v.createdBy),
        comment: cut(v.comment),
      };
    });
  return { shown, total: unended.length };
}

/** Dead letters counted for a tenant's dashboard; the list shows the newest 50. */
const DEAD_COUNTED = 1000;
const DEAD_SHOWN = 50;

/**
 * What the dashboard shows, for one tenant: its decision mix, its live
 * incidents, its events accounting, its delivery totals and dead letters.
 * The queue's size and lag span every tenant, so they are shown only
 * without tenants (`scoped` false), where everything is one operator's.
 */
export async function snapshot(d: DashboardDeps, tenant: string, scoped: boolean): Promise<Snapshot> {
  const now = d.clock.now();
  const [incidents, devices, dead, backlog, silences, heartbeats] = await Promise.all([
    d.dedup.listIncidents(tenant, 100).catch(() => []),
    // Without tenants, events may name any tenant_id: show every device.
    d.events.devices(scoped ? tenant : null, 100).catch(() => []),
    d.deliveries.deadLetters(tenant, DEAD_COUNTED).catch(() => null),
    scoped ? null : d.deliveries.backlog().catch(() => null),
    d.silences.list(tenant).catch(() => []),
    d.heartbeats.list(tenant).catch(() => []),
  ]);
  const events = d.accounting.snapshot(tenant);
  const shown = shownSilences(silences, now);
  return {
    at: new Date(now).toISOString(),
    tenant,
    decisions: d.tally.of(tenant),
    incidents: incidents.map((i) => ({ ...i, age_seconds: Math.max(0, Math.round((now - Date.parse(i.created_at)) / 1000)) })),
    devices,
    events: { ...events, invariant_holds: events.received === events.applied + events.duplicate + sum(events.rejected) },
    delivery: {
      adapters: scoped ? d.deliveryTally.of(tenant) : d.deliveryTally.all(),
      pending: backlog?.pending ?? null,
      held: backlog?.held ?? null,
      holds: d.deliveryTally.holds(scoped ? tenant : null),
      dead: scoped ? (dead?.length ?? null) : (backlog?.dead ?? null),
      lag_seconds: backlog ? (backlog.oldestAt === null ? 0 : Math.max(0, Math.round((now - backlog.oldestAt) / 1000))) : null,
    },
    dead_letters: (dead ?? []).slice(0, DEAD_SHOWN).map(deadLetterView),
    silences: shown.shown,
    silences_total: shown.total,
    heartbeats: heartbeats.map(heartbeatView),
  };
}
