import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { DecisionObserver, IncidentDecision } from '../engine/deduplicator.js';
import { DECISION_REASONS } from '../core/decision.js';
import type { DedupStore } from '../store/contract/index.js';
import type { Delivery, FoldOutcome } from '../store/contract/index.js';
import type { DeliveryObserver, DeliveryOutcome, HeldBy } from '../delivery/worker.js';
import { systemClock, type Clock } from '../core/clock.js';
import type { HeartbeatStatus } from '../heartbeats/heartbeats.js';
import { HELD_BY } from '../mute/kinds.js';
import { COMMIT, VERSION } from '../core/version.js';
import { schemaVersions } from '../store/schema-versions.js';
import type { ConfigHolder } from '../config/holder.js';
import type { CheckpointStatus } from '../store/sqlite/checkpointer.js';
import { watchCheckpoints } from './checkpoint-metrics.js';

/** What the config holder counts of its reloads. */
type ConfigReloads = ConfigHolder['reloads'];

/**
 * One registry per server, injected (never prom-client's global one), so two
 * servers in one test process do not share counters. Labels are small closed
 * sets: never keys, devices or tenants' identifiers. The one exception is
 * the heartbeat gauges: their heartbeats and tenants are named in the config,
 * a set the operator closed.
 */
export class Metrics implements DecisionObserver, DeliveryObserver {
  readonly registry = new Registry();
  readonly decisions: Counter<'decision' | 'reason'>;
  /** Decisions by decision and reason (the set is closed and small): what `decisions` answers when scraped. */
  private readonly decisionCounts = new Map<string, { decision: string; reason: string; n: number }>();
  readonly rejected: Counter<'route' | 'code'>;
  readonly updatesPerIncident: Histogram<'ended'>;
  readonly storeLatency: Histogram<'operation' | 'outcome'>;
  readonly degraded: Gauge;
  readonly degradations: Counter;
  readonly reconciled: Counter<'outcome'>;
  readonly violations: Counter<'decision' | 'severity' | 'action'>;
  readonly deliveries: Counter<'adapter' | 'outcome' | 'reason'>;
  readonly deliveryAttempts: Counter<'adapter'>;
  private readonly mutedTotal: Counter<'by'>;
  private readonly releasedTotal: Counter;
  /** Delivery passes that found the worker caught up. */
  readonly idlePasses: Counter;
  /** history events that could not be written (docs/history.md) */
  readonly historyLost: Counter;
  readonly historyDropped: Counter<'reason'>;
  private readonly droppedTotal: Counter<'reason'>;
  readonly deliveryDuration: Histogram<'adapter'>;

  /** The store the live-keys gauge reads; set once it is open (metrics exist first, to see a degraded start). */
  private store: DedupStore | null = null;

  /**
   * `tenantLabels`: whether metrics may name tenants and heartbeats
   * (`metrics.tenant_labels`). /metrics is open to anyone who reaches the
   * port, so by default no series names a tenant.
   */
  constructor(clock: Clock = systemClock, tenantLabels: () => boolean = () => false) {
    const store = () => this.store;
    collectDefaultMetrics({ register: this.registry, prefix: 'onceonly_' });
    // prom-client names these gauges `_total`, which promtool's lint rejects
    // (only counters end in _total); the same figures are in *_active_* below.
    for (const name of ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total']) {
      this.registry.removeSingleMetric(`onceonly_${name}`);
    }
    // Counted in a plain map per decision (prom-client hashes and checks the labels on every inc) and
    // handed to the counter when scraped. Every known series starts at zero, so a rate() has a baseline.
    const counts = this.decisionCounts;
    for (const [decision, reason] of DECISION_REASONS) counts.set(`${decision}/${reason}`, { decision, reason, n: 0 });
    this.decisions = new Counter({
      name: 'onceonly_incident_decisions_total',
      help: 'Incident decisions by decision and reason (the decision mix).',
      labelNames: ['decision', 'reason'],
      registers: [this.registry],
      collect() {
        this.reset();
        for (const c of counts.values()) this.inc({ decision: c.decision, reason: c.reason }, c.n);
      },
    });
    this.rejected = new Counter({
      name: 'onceonly_requests_rejected_total',
      help: 'Requests refused before any decision, by route and error code.',
      labelNames: ['route', 'code'],
      registers: [this.registry],
    });
    this.updatesPerIncident = new Histogram({
      name: 'onceonly_incident_updates_per_incident',
      help: 'UPDATEs an incident had when it ended (closed, or found expired); many means a churning fingerprint.',
      labelNames: ['ended'],
      buckets: [0, 1, 2, 3, 5, 10, 20, 50],
      registers: [this.registry],
    });
    this.storeLatency = new Histogram({
      name: 'onceonly_store_operation_duration_seconds',
      help: 'Store calls made by the engine, by operation and outcome (includes fail-open fallbacks).',
      labelNames: ['operation', 'outcome'],
      buckets: [0.0001, 0.00025, 0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1],
      registers: [this.registry],
    });
    this.degraded = new Gauge({
      name: 'onceonly_store_degraded',
      help: '1 while the shared store is unreachable and decisions fail open to the local journal.',
      registers: [this.registry],
    });
    this.degraded.set(0);
    this.degradations = new Counter({
      name: 'onceonly_store_degradations_total',
      help: 'Times the shared store became unreachable and the service failed open.',
      registers: [this.registry],
    });
    this.reconciled = new Counter({
      name: 'onceonly_failopen_reconciled_total',
      help: 'Journal entries replayed after an outage: claimed (stood), merged (a provisional duplicate), done (replayed before), closed (the key was closed after it), expired, quarantined (refused by the store).',
      labelNames: ['outcome'],
      registers: [this.registry],
    });
    for (const o of ['claimed', 'merged', 'done', 'closed', 'expired', 'quarantined']) this.reconciled.labels(o).inc(0);
    this.violations = new Counter({
      name: 'onceonly_violation_decisions_total',
      help: "SPC violation decisions by decision, severity and the decision table's action for it.",
      labelNames: ['decision', 'severity', 'action'],
      registers: [this.registry],
    });
    this.deliveries = new Counter({
      name: 'onceonly_deliveries_total',
      help: 'Settled delivery attempts by adapter, outcome (delivered, retried, dead, skipped, lost_lease) and reason (ok, http_503, network, exhausted, …).',
      labelNames: ['adapter', 'outcome', 'reason'],
      registers: [this.registry],
    });
    this.deliveryAttempts = new Counter({
      name: 'onceonly_delivery_attempts_total',
      help: 'Calls made to an adapter (every try, retries included).',
      labelNames: ['adapter'],
      registers: [this.registry],
    });
    this.deliveryDuration = new Histogram({
      name: 'onceonly_delivery_duration_seconds',
      help: 'One delivery attempt, adapter call and settlement, by adapter.',
      labelNames: ['adapter'],
      buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [this.registry],
    });
    this.mutedTotal = new Counter({
      name: 'onceonly_deliveries_muted_total',
      help: `Deliveries a mute or hold started to hold, by what held them (${HELD_BY.join(', ')}).`,
      labelNames: ['by'],
      registers: [this.registry],
    });
    this.releasedTotal = new Counter({
      name: 'onceonly_deliveries_released_total',
      help: "Held deliveries released when nothing muted them any more (each goes out once, with its key's latest state).",
      registers: [this.registry],
    });
    this.idlePasses = new Counter({
      name: 'onceonly_delivery_idle_passes_total',
      help: 'Delivery passes that found nothing due and no call in flight: the worker is caught up (a few a second while idle).',
      registers: [this.registry],
    });
    this.historyLost = new Counter({
      name: 'onceonly_history_lost_total',
      help: "Events of keys' histories that could not be written (the store refused them, or too many waited while it was away); kept for 0.2.0's dashboards, onceonly_history_dropped_total says why.",
      registers: [this.registry],
    });
    this.historyDropped = new Counter({
      name: 'onceonly_history_dropped_total',
      help: "Events of keys' histories dropped, by reason: store_refused (the store refused their batch: away, failed open, or an error), queue_full (20,000 waited for a store that was away), tenant_bytes (their tenant's histories held history.max_bytes_per_tenant).",
      labelNames: ['reason'],
      registers: [this.registry],
    });
    this.droppedTotal = new Counter({
      name: 'onceonly_deliveries_dropped_total',
      help: 'Deliveries that will never go out because of a mute: created_and_closed_while_muted (a create and its close both held), superseded_by_close (a held update whose close goes out).',
      labelNames: ['reason'],
      registers: [this.registry],
    });
    // One backlog read per scrape feeds the four gauges below.
    let backlog: Promise<{ pending: number; dead: number; lag: number; held: number } | null> | null = null;
    const readBacklog = () =>
      (backlog ??= (async () => {
        const s = store();
        if (!s) return null;
        try {
          const b = await s.deliveries.backlog();
          return { pending: b.pending, dead: b.dead, held: b.held, lag: b.oldestAt === null ? 0 : Math.max(0, (clock.now() - b.oldestAt) / 1000) };
        } catch {
          return null; // the store is down: keep the last values; onceonly_store_degraded says why
        } finally {
          setImmediate(() => (backlog = null));
        }
      })());
    const backlogGauge = (name: string, help: string, pick: (b: { pending: number; dead: number; lag: number; held: number }) => number) =>
      new Gauge({
        name,
        help,
        registers: [this.registry],
        async collect() {
          const b = await readBacklog();
          if (b) this.set(pick(b));
        },
      });
    backlogGauge('onceonly_deliveries_pending', 'Deliveries waiting (due, leased or backing off), all adapters.', (b) => b.pending);
    backlogGauge('onceonly_deliveries_held', 'Deliveries a mute holds now (counted in onceonly_deliveries_pending too).', (b) => b.held);
    backlogGauge('onceonly_dead_letters', 'Dead letters parked and not yet retried (GET /v1/dead-letters).', (b) => b.dead);
    backlogGauge('onceonly_outbox_lag_seconds', 'Age of the oldest decision not yet delivered everywhere (0 when none waits).', (b) => b.lag);
    new Gauge({
      name: 'onceonly_incidents_live',
      help: 'Incident keys currently live (unexpired) in the store.',
      registers: [this.registry],
      async collect() {
        const s = store();
        if (!s) return;
        try {
          this.set(await s.queries.countLiveIncidents());
        } catch {
          // The store is down: keep the last value; onceonly_store_degraded says why.
        }
      },
    });
    // Heartbeats are named in the config, a closed set the operator chose; still, tenant and heartbeat
    // names say who the customers are and what they run, so they are labels only when the operator says so.
    const heartbeats = () => this.heartbeats;
    new Gauge({
      name: 'onceonly_heartbeat_last_ping_timestamp_seconds',
      help: 'When each heartbeat was last pinged (Unix seconds); absent for one never pinged, and unless metrics.tenant_labels is true.',
      labelNames: ['tenant', 'heartbeat'],
      registers: [this.registry],
      collect() {
        this.reset();
        if (!tenantLabels()) return;
        for (const [tenant, list] of heartbeats()) for (const h of list) if (h.lastPingAt !== null) this.labels(tenant, h.name).set(h.lastPingAt / 1000);
      },
    });
    new Gauge({
      name: 'onceonly_heartbeats_missed',
      help: 'Heartbeats missed now (overdue, their HEARTBEAT_MISSED incident open); by tenant when metrics.tenant_labels is true.',
      labelNames: ['tenant'],
      registers: [this.registry],
      collect() {
        this.reset();
        const missed = (list: readonly HeartbeatStatus[]) => list.filter((h) => h.state === 'missed').length;
        if (!tenantLabels()) {
          let all = 0;
          for (const list of heartbeats().values()) all += missed(list);
          this.set(all);
          return;
        }
        for (const [tenant, list] of heartbeats()) this.labels(tenant).set(missed(list));
      },
    });
    const schemas = schemaVersions();
    new Gauge({
      name: 'onceonly_build_info',
      help: 'Always 1: the version of onceonly, the commit it was built from, the schemas it migrates to and the Node.js this replica runs, as labels.',
      labelNames: ['version', 'commit', 'sqlite_schema', 'postgres_schema', 'node'],
      registers: [this.registry],
    }).set({ version: VERSION, commit: COMMIT, sqlite_schema: String(schemas.sqlite), postgres_schema: String(schemas.postgres), node: process.version }, 1);
    const reloads = () => this.reloads;
    new Counter({
      name: 'onceonly_config_reload_total',
      help: 'Config reloads (SIGHUP) since start, by result: success, or failure (refused; the previous config stays in force).',
      labelNames: ['result'],
      registers: [this.registry],
      collect() {
        this.reset();
        const r = reloads();
        this.inc({ result: 'success' }, r?.taken ?? 0);
        this.inc({ result: 'failure' }, r?.refused ?? 0);
      },
    });
    new Gauge({
      name: 'onceonly_config_last_reload_success_timestamp_seconds',
      help: 'When the config in force was loaded (Unix seconds): at start, then at each reload taken.',
      registers: [this.registry],
      collect() {
        const r = reloads();
        if (r) this.set(r.lastLoadedAt / 1000);
      },
    });
    const journal = () => this.journal;
    new Gauge({
      name: 'onceonly_failopen_quarantined',
      help: 'Journal entries the shared store refused, set aside until `onceonly journal retry` or `drop` (0 on embedded stores).',
      registers: [this.registry],
      collect() {
        this.set(journal()?.quarantinedCount() ?? 0);
      },
    });
  }

  /** The last check's heartbeats, by tenant: what the two heartbeat gauges show. */
  private heartbeats: ReadonlyMap<string, HeartbeatStatus[]> = new Map();

  heartbeatsChecked(found: ReadonlyMap<string, HeartbeatStatus[]>): void {
    this.heartbeats = found;
  }

  /** The fail-open journal whose quarantine is reported (shared stores only). */
  watchJournal(journal: { quarantinedCount(): number }): void {
    this.journal = journal;
  }

  private journal: { quarantinedCount(): number } | null = null;

  /** A SQLite store's WAL and checkpoints (SQLite only: its series exist from this call). */
  watchCheckpoints(store: { checkpoints(): CheckpointStatus | null }): void {
    watchCheckpoints(this.registry, () => store.checkpoints());
  }

  watchStore(store: DedupStore): void {
    this.store = store;
  }

  /** The config's reloads, read when scraped. */
  watchConfig(reloads: ConfigReloads): void {
    this.reloads = reloads;
  }

  private reloads: ConfigReloads | null = null;

  attempted(adapter: string): void {
    this.deliveryAttempts.labels(adapter).inc();
  }

  /** A mute held a delivery, or folding it dropped it. */
  held(_d: Delivery, muted: HeldBy, outcome: FoldOutcome['kind'], first: boolean): void {
    if (outcome === 'held' && first) this.mutedTotal.labels(muted.by).inc();
    this.foldDropped(outcome);
  }

  released(_d: Delivery, outcome: FoldOutcome['kind']): void {
    if (outcome === 'ready') this.releasedTotal.inc();
    this.foldDropped(outcome);
  }

  private foldDropped(outcome: FoldOutcome['kind']): void {
    if (outcome === 'dropped') this.droppedTotal.labels('created_and_closed_while_muted').inc();
    if (outcome === 'superseded') this.droppedTotal.labels('superseded_by_close').inc();
  }

  settled(d: Delivery, outcome: DeliveryOutcome, reason: string, detail: { seconds: number }): void {
    this.deliveries.labels(d.adapter, outcome, reason).inc();
    if (outcome !== 'skipped') this.deliveryDuration.labels(d.adapter).observe(detail.seconds);
  }

  decided(d: IncidentDecision): void {
    const k = `${d.decision}/${d.reason}`;
    const c = this.decisionCounts.get(k);
    if (c) c.n++;
    else this.decisionCounts.set(k, { decision: d.decision, reason: d.reason, n: 1 });
  }

  ended(updates: number, how: 'closed' | 'expired'): void {
    this.updatesPerIncident.labels(how).observe(updates);
  }
}
