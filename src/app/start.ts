import { hostname } from 'node:os';
import type { FastifyInstance } from 'fastify';
import { ConfigHolder } from '../config/holder.js';
import { type Clock, ServerClock, systemClock } from '../core/clock.js';
import { startDelivery } from '../delivery/service.js';
import { DEFAULT_TENANT, type DecisionObserver, Deduplicator } from '../engine/deduplicator.js';
import { EventIngest } from '../engine/events.js';
import { ViolationIngest } from '../engine/violations.js';
import { HeartbeatMonitor } from '../heartbeats/heartbeats.js';
import { buildApp } from '../http/app.js';
import { EpochWatch } from './epoch-watch.js';
import { DecisionTally, observers } from '../observe/decision-tally.js';
import { DeliveryTally } from '../observe/delivery-tally.js';
import { EventAccounting } from '../observe/event-accounting.js';
import { instrumentStore } from '../observe/instrumented-store.js';
import { createLogger, type Logger } from '../observe/logger.js';
import { Metrics } from '../observe/metrics.js';
import { SILENCE_POLL_MS, SilenceCache } from '../mute/silence-cache.js';
import { Inhibition } from '../mute/inhibition.js';
import { Escalator } from '../escalation/escalator.js';
import { GroupApplier, groupingActive } from '../groups/groups.js';
import { noiseControls } from '../mute/pipeline.js';
import type { DedupStore, DeliveryScope } from '../store/contract/index.js';
import { isPostgresUrl, masked, openStore, shown } from '../store/open.js';
import { storeFaultOf } from '../store/errors.js';
import { VERSION } from '../core/version.js';
import { FailOpenStore } from '../store/failopen/fail-open-store.js';
import { SqliteStore } from '../store/sqlite/sqlite-store.js';
import { JournalInUseError } from '../store/failopen/journal-lock.js';
import { publicBindGuard, readTls, StartupError } from './bind.js';
import { decisionLog, deliveryObserver, deliveryObservers, failOpenEvents, rateLimitedLog } from './observers.js';
import { MqttIngest } from '../ingest/mqtt.js';
import { NatsIngest } from '../ingest/nats.js';
import { AlertmanagerIngest } from '../engine/alertmanager.js';
import { OpsgenieIngest } from '../engine/opsgenie.js';
import { PagerdutyIngest } from '../engine/pagerduty.js';
import { sweepUntilDone } from './sweeper.js';
import { HistoryRecorder } from '../history/recorder.js';
import { historyObserver } from '../history/deliveries.js';
import { recordViolation } from '../history/decisions.js';

export { isLoopback, StartupError } from './bind.js';

export interface ServerOptions {
  port: number;
  host: string;
  store: string;
  configPath?: string;
  tlsCert?: string;
  tlsKey?: string;
  clock?: Clock;
  logger?: Logger;
  /** How often expired records are swept (they already read as absent before that). */
  sweepIntervalMs?: number;
  /** Delivery worker knobs for tests: the jitter source and the idle poll. */
  delivery?: { random?: () => number; idleMs?: number };
  /** Dashboard knobs for tests: how often a stream sends a snapshot. */
  dashboard?: { intervalMs?: number };
  /** How often this replica looks for missed heartbeats (default 1 s). */
  heartbeatCheckMs?: number;
}

export interface RunningServer {
  app: FastifyInstance;
  url: string;
  config: ConfigHolder;
  logger: Logger;
  /** The store the server decides on, as opened (before instrumentation): for inspection. */
  store: DedupStore;
  /** This replica's heartbeat monitor (tests run its checks by hand). */
  heartbeats: HeartbeatMonitor;
  /** Drains in-flight requests, stops the sweeper, closes the store. */
  close(): Promise<void>;
}

/**
 * The composition root of the server: config, then metrics, the store, the engine, the
 * HTTP routes, the delivery worker and the sweeper, in that order, and their
 * shutdown in reverse. (simulate/simulate.ts wires the same parts on a memory store for a replay.)
 */
export async function startServer(options: ServerOptions): Promise<RunningServer> {
  const logger = options.logger ?? createLogger();
  // On Postgres every time the replica uses is the server's (the store follows it from init on), as Redis's
  // scripts read its TIME: a host whose clock is wrong must not expire a live key or run out a lease early.
  const clock = options.clock ?? (isPostgresUrl(options.store) ? new ServerClock(systemClock) : systemClock);
  const config = ConfigHolder.fromFile(options.configPath, clock);
  const bindGuard = publicBindGuard(options.host);
  bindGuard(config.current);
  config.guard = bindGuard;
  const https = readTls(options.tlsCert, options.tlsKey);

  const cfg = config.current;
  // The first line says what runs: an operator reading a replica's log need not guess its version, store or receivers.
  logger.info(
    {
      version: VERSION,
      node: process.version,
      store: masked(options.store),
      adapters: cfg.adapters.map((a) => ({ name: a.name, type: a.type })),
      tenants: cfg.tenants.map((t) => t.id),
      config: options.configPath ?? null,
    },
    `onceonly ${VERSION} starting`,
  );
  const replica = `${hostname()}:${process.pid}`;
  // Metrics come first: a journal left by a crash degrades the store while it opens.
  const metrics = new Metrics(clock, () => config.current.metrics.tenant_labels);
  const open = () =>
    openOrExplain(
      () =>
        openStore(options.store, clock, {
          expiredGraceMs: cfg.incidents.expired_grace_seconds * 1000,
          redisShards: cfg.redis.shards,
          redisPersistence: {
            acceptDataLoss: cfg.redis.accept_data_loss || process.env.ONCEONLY_REDIS_ACCEPT_DATA_LOSS === '1',
            onUnchecked: (why) => logger.warn(`${why}; make sure it keeps data on disk and never evicts keys (docs/deploy.md)`),
          },
          failOpen: {
            timeoutMs: cfg.failopen.timeout_ms,
            failAfter: cfg.failopen.fail_after,
            recoverAfter: cfg.failopen.recover_after,
            operationTimeoutMs: cfg.failopen.operation_timeout_ms,
            probeIntervalMs: cfg.failopen.probe_interval_ms,
            ...(cfg.failopen.journal_path ? { journalPath: cfg.failopen.journal_path } : {}),
            port: options.port,
            events: failOpenEvents(metrics, logger),
          },
          onConnectionError: rateLimitedLog(logger, 'store connection error'),
          onCheckpointProblem: (err) => logger.warn(err.message),
          onShardsMoved: (from, to) =>
            logger.warn(
              { from, to },
              `the Redis keys are moving from ${from} to ${to} shards: this replica moved with them; set redis.shards: ${to} before its next start`,
            ),
          ledger: {
            inputs: () => {
              const c = config.current;
              return {
                incidents: c.incidents.retention === 'forever',
                events: c.events.retention === 'forever',
                violations: c.violations.retention === 'forever',
              };
            },
            raceWindowMs: () => config.current.incidents.race_window_ms,
            replica,
          },
        }),
      shown(options.store),
    );
  const raw = await preparedStore(open, logger);
  const store = instrumentStore(raw, metrics.storeLatency);
  // The store's epoch marker: this replica's baseline now, then a look every few seconds, so a store that
  // lost its data (restarted without persistence, flushed, restored from an old backup) is never silent.
  const epochs = new EpochWatch(raw, { registry: metrics.registry, logger, clock });
  await epochs.start();
  metrics.watchStore(store);
  metrics.watchConfig(config.reloads);
  if (raw instanceof FailOpenStore) metrics.watchJournal(raw.journal);
  if (raw instanceof SqliteStore) metrics.watchCheckpoints(raw);

  // Silences: this replica's copy of the shared store's, reloaded when their version moves.
  const silenceReadFailed = rateLimitedLog(logger, 'cannot read the silences; muting with the copy loaded before');
  const silences = new SilenceCache(
    store.silences,
    (err) => silenceReadFailed(err instanceof Error ? err : new Error(String(err))),
    SILENCE_POLL_MS,
    raw instanceof FailOpenStore ? raw.journal : undefined,
    () => clock.now(),
  );
  await silences.start();

  const tally = new DecisionTally();
  const deliveryTally = new DeliveryTally();
  const inhibitionFailed = rateLimitedLog(logger, 'cannot record or read an inhibition source; targets may page');
  const inhibition = new Inhibition(
    () => config.current.inhibit_rules,
    store.inhibitors,
    store.incidents,
    (err) => inhibitionFailed(err instanceof Error ? err : new Error(String(err))),
    () => raw instanceof FailOpenStore && raw.isDegraded,
  );
  // Each key's history: written beside the steps it records, a batch at a time.
  const historyFailed = rateLimitedLog(logger, "cannot write keys' histories; those events are lost");
  const history = new HistoryRecorder({
    store: store.history,
    limits: () => {
      const h = config.current.history;
      return h.max_events > 0 ? { maxEvents: h.max_events, keepMs: h.retention_seconds * 1000, maxTenantBytes: h.max_bytes_per_tenant } : null;
    },
    clock,
    lost: (n, reason, err) => {
      metrics.historyLost.inc(n);
      metrics.historyDropped.inc({ reason }, n);
      if (err) historyFailed(err instanceof Error ? err : new Error(String(err)));
    },
  });
  const noise = noiseControls({ config: () => config.current, flaps: store.flaps, silences, inhibition });
  const muteSource = noise.mutes;
  const mutes = { source: muteSource, now: () => clock.now() };
  // A decision that writes something to deliver wakes this replica's delivery worker (started below),
  // so a trickle of alerts reaches the receivers in milliseconds, not at the end of the idle wait.
  const wakeDelivery: { nudge: (near?: DeliveryScope) => void } = { nudge: () => {} };
  const nudging: DecisionObserver = {
    decided: (d, tenant) => {
      if (d.decision !== 'SUPPRESS') wakeDelivery.nudge({ kind: 'incident', tenant, key: d.dedup_key });
    },
    ended: () => wakeDelivery.nudge(),
  };
  const dedup = new Deduplicator({
    store,
    config: () => config.current,
    observer: observers(metrics, tally, decisionLog(logger), nudging),
    mutes,
    inhibition,
    flaps: { store: store.flaps, now: () => clock.now() },
    history: { recorder: history, replica },
  });
  // Holds on a key's own history: a create that waits in case it clears, a flapping key that waits to settle.
  const holds = noise.holds;
  // Groups of incidents: applied from the incidents' outbox entries by the delivery gate's group stage.
  const groups = new GroupApplier({ groups: store.groups, incidents: store.incidents, config: () => config.current, clock });
  let sampled = 0;
  const events = new EventIngest(
    store,
    () => config.current,
    clock,
    (e, o) => {
      // Device identifiers go to sampled logs, never to metric labels.
      if ((o.gap || o.outcome === 'rejected') && sampled++ % 100 === 0) {
        logger.info(
          { tenant: e.tenant, device: e.device, boot: e.boot, sequence: e.sequence, outcome: o.outcome, reason: o.reason, gap: o.gap },
          'event gap or rejection (1 in 100 logged)',
        );
      }
    },
  );
  const accounting = new EventAccounting(metrics.registry, () => events.staleDevices());
  const violations = new ViolationIngest(
    store,
    () => config.current,
    (v, d, tenant) => {
      metrics.violations.labels(d.decision, d.severity, d.action).inc();
      recordViolation(history, tenant, v, d, replica);
      // Every new alarm is in the log with what the table says to do (a log-only one is nowhere else).
      if (d.decision === 'CREATE')
        logger.info(
          { process_id: v.process_id, rule_id: v.rule_id, key: d.key, alarm_code: d.alarm_code, severity: d.severity, action: d.action },
          'SPC alarm',
        );
    },
    mutes,
  );
  const heartbeatFailed = rateLimitedLog(logger, 'cannot check the heartbeats; looking again at the next check');
  const heartbeats = new HeartbeatMonitor({
    store: store.heartbeats,
    dedup,
    config: () => config.current,
    clock,
    checkMs: options.heartbeatCheckMs,
    observer: {
      checked: (found) => metrics.heartbeatsChecked(found),
      opened: (tenant, name, decision) => logger.warn({ tenant, heartbeat: name, decision }, 'heartbeat missed'),
      recovered: (tenant, name) => logger.info({ tenant, heartbeat: name }, 'heartbeat pinged again'),
      error: (err) => heartbeatFailed(err instanceof Error ? err : new Error(String(err))),
    },
  });
  // The drop-in inputs, decided by the same deduplicator: over HTTP, and Alertmanager's over the brokers too.
  const dropIns = {
    alertmanager: new AlertmanagerIngest(dedup, () => config.current, clock, heartbeats),
    pagerduty: new PagerdutyIngest(dedup, () => config.current),
    opsgenie: new OpsgenieIngest(dedup, () => config.current),
  };
  const app = buildApp({
    dropIns,
    storeResetAt: () => epochs.resetAt,
    mutes: muteSource,
    dedup,
    events,
    violations,
    accounting,
    deliveries: store.deliveries,
    metrics,
    logger,
    https,
    timeouts: { headersMs: cfg.http.headers_timeout_ms, requestMs: cfg.http.request_timeout_ms },
    config: () => config.current,
    clock,
    tally,
    deliveryTally,
    silences,
    dashboardIntervalMs: options.dashboard?.intervalMs,
    heartbeats,
    groups,
    history: { recorder: history, store: store.history },
  });
  try {
    await app.listen({ port: options.port, host: options.host });
  } catch (error) {
    silences.stop();
    await store.close();
    const problem = listenProblem(error, options.host, options.port);
    throw problem ? new StartupError(problem) : error;
  }
  const addr = app.server.address();
  const port = typeof addr === 'object' && addr ? addr.port : options.port;
  const hostPart = options.host.includes(':') && !options.host.startsWith('[') ? `[${options.host}]` : options.host;
  const url = `${https ? 'https' : 'http'}://${hostPart}:${port}`;
  // With a shared store, which journal file: unset in the config, it is this port's (or one an earlier release left, taken over).
  logger.info(raw instanceof FailOpenStore ? { journal: raw.journal.path } : {}, `listening on ${url}`);

  const delivery = startDelivery({
    store: store.deliveries,
    tickets: store.tickets,
    config: () => config.current,
    clock,
    observer: deliveryObservers(
      deliveryObserver(metrics, logger, deliveryTally),
      historyObserver(history, (t, id) => silences.silence(t, id)),
    ),
    mutes: muteSource,
    holds,
    groups: () => (groupingActive(config.current) ? groups : null),
    escalation: new Escalator({ incidents: store.incidents, config: () => config.current, clock, history }),
    ...options.delivery,
  });
  // On Redis a nudged pass visits only the shards of the keys decided since the last pass, not all
  // of them (64 by default): a burst of decisions costs the masters a few scripts (docs/scaling.md).
  wakeDelivery.nudge = (near) => delivery.worker.nudge(near);

  heartbeats.start();

  // Inputs from brokers, decided by the same ingests as the HTTP routes; started once HTTP serves.
  const ingests = { dedup, events, violations, alerts: dropIns.alertmanager, accounting };
  // What both take: the tenant the messages belong to, the body bound, where they log and count.
  const common = (tenant: string | undefined) => ({
    logger,
    registry: metrics.registry,
    tenant: tenant ?? DEFAULT_TENANT,
    scoped: cfg.tenants.length > 0,
    maxBytes: cfg.limits.body_bytes,
    alertsPerPost: cfg.limits.alerts_per_post,
  });
  const { mqtt: mqttIn, nats: natsIn } = cfg.ingest;
  const mqttIngest = mqttIn
    ? new MqttIngest(mqttIn, ingests, {
        ...common(mqttIn.tenant),
        connectionError: rateLimitedLog(logger, 'MQTT ingest: cannot reach the broker; reconnecting'),
        storeError: rateLimitedLog(logger, 'MQTT ingest: the store could not take a message; trying it again, unacknowledged'),
      })
    : null;
  mqttIngest?.start();
  const natsIngest = natsIn
    ? new NatsIngest(natsIn, ingests, {
        ...common(natsIn.tenant),
        paused: () => raw instanceof FailOpenStore && raw.isDegraded,
        connectionError: rateLimitedLog(logger, 'NATS ingest: cannot reach NATS; reconnecting'),
        storeError: rateLimitedLog(logger, "NATS ingest: the store could not take a message; nak'd, to be handed out again"),
      })
    : null;
  natsIngest?.start();

  let sweeping: Promise<unknown> | null = null;
  const sweeper = setInterval(() => {
    // A pass still running (a large backlog) is not started twice.
    sweeping ??= sweepUntilDone(store, () => closing !== null)
      .catch((err) => logger.warn({ err }, 'sweep of expired records failed'))
      .finally(() => (sweeping = null));
    const retentionMs = config.current.delivery.dead_letter_retention_days * 86_400_000;
    store.deliveries.sweepDeadLetters(retentionMs).catch((err) => logger.warn({ err }, 'sweep of old dead letters failed'));
    groups.sweep().catch((err) => logger.warn({ err }, 'sweep of expired group members failed'));
  }, options.sweepIntervalMs ?? 60_000);
  sweeper.unref();
  // Route groups' repeats: looked for as often as their shortest group_interval asks (repeatIfDue says when).
  let repeating: Promise<unknown> | null = null;
  const repeater = setInterval(() => {
    repeating ??= groups
      .repeatIfDue()
      .catch((err) => logger.warn({ err }, 'repeat of route groups failed'))
      .finally(() => (repeating = null));
  }, 1000);
  repeater.unref();

  let closing: Promise<void> | null = null;
  return {
    app,
    url,
    config,
    logger,
    store: raw,
    heartbeats,
    close() {
      closing ??= (async () => {
        // Each step says when it begins: a drain that does not end names what it waits for.
        const step = (what: string) => logger.debug({ step: what }, 'drain');
        clearInterval(sweeper);
        clearInterval(repeater);
        step('sweeper');
        await sweeping;
        // No message is taken once the drain begins; one not yet acknowledged goes back to the broker.
        step('mqtt ingest');
        await mqttIngest?.stop();
        step('nats ingest');
        await natsIngest?.stop();
        step('heartbeats');
        await heartbeats.stop();
        await epochs.stop();
        step('http');
        await drainHttp(app, logger);
        // After the last request: what it decided is in the outbox for the next start.
        step('deliveries');
        await delivery.stop();
        step('history');
        await history.close();
        silences.stop();
        step('store');
        await store.close();
      })();
      return closing;
    },
  };
}

/** How long a drain waits for requests in flight and for clients to let their connections go. */
const HTTP_DRAIN_MS = 10_000;

/**
 * Stops taking requests and answers those in flight; past HTTP_DRAIN_MS the
 * connections still open are closed. A client that holds a keep-alive
 * connection open (or a request that does not end) must not hold a replica
 * past its orchestrator's grace period, after which it is killed with its
 * deliveries unfinished.
 */
async function drainHttp(app: FastifyInstance, logger: Logger): Promise<void> {
  const closed = app.close();
  let timer: NodeJS.Timeout | undefined;
  const late = await Promise.race([closed.then(() => false), new Promise<boolean>((r) => (timer = setTimeout(() => r(true), HTTP_DRAIN_MS)))]);
  clearTimeout(timer);
  if (!late) return;
  logger.warn(`HTTP connections still open ${HTTP_DRAIN_MS / 1000} s into the drain: closed`);
  app.server.closeAllConnections();
  await closed;
}

/**
 * A store that cannot be opened is a start-up error the operator can act on,
 * not a crash: a journal another process owns, or a file or folder the system
 * refuses (no such folder, no permission, not a database), said with the
 * system's own reason.
 */
function openOrExplain<T>(open: () => T, what: string): T {
  try {
    return open();
  } catch (error) {
    if (error instanceof JournalInUseError) throw new StartupError(error.message);
    if (systemCode(error)) throw new StartupError(`cannot open the store ${what}: ${(error as Error).message}`);
    throw error;
  }
}

/** The code of an error the system or SQLite raised (ENOENT, EACCES, SQLITE_CANTOPEN, …), if it is one. */
function systemCode(error: unknown): string | null {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^(E[A-Z]+|SQLITE_[A-Z_]+)$/.test(code) ? code : null;
}

/** Why the port cannot be had, in the operator's terms. */
function listenProblem(error: unknown, host: string, port: number): string | null {
  switch (systemCode(error)) {
    case 'EADDRINUSE':
      return `port ${port} on ${host} is in use by another process: stop it, or give another --port (0 picks a free one)`;
    case 'EACCES':
      return `not allowed to listen on port ${port} on ${host} (ports below 1024 need privileges): give another --port`;
    case 'EADDRNOTAVAIL':
      return `${host} is not an address of this machine: give another --host`;
    default:
      return null;
  }
}

/**
 * How long a starting replica keeps trying a store that does not answer (a
 * reset, a restart, a network blip while it connects or migrates) before it
 * gives up with exit 2. One blip at start no longer costs a replica; a store
 * that is wrong (its shard count, its schema's generation) fails at once.
 */
export const STORE_START_WAIT_MS = 30_000;

/** Opens the store and prepares it (connect, migrate); a transport fault is tried again on a fresh store, with backoff, for STORE_START_WAIT_MS. */
async function preparedStore<S extends { init?(): Promise<void>; close(): Promise<void> }>(open: () => S, logger: Logger): Promise<S> {
  const deadline = Date.now() + STORE_START_WAIT_MS;
  for (let attempt = 0; ; attempt++) {
    const raw = open();
    try {
      await raw.init?.();
      return raw;
    } catch (error) {
      await raw.close().catch(() => {});
      const message = (error as Error).message;
      const waitMs = Math.min(5000, 250 * 2 ** attempt);
      if (storeFaultOf(error) !== 'transport' || Date.now() + waitMs > deadline) throw new StartupError(`cannot prepare the store: ${message}`);
      logger.warn({ err: message, retry_in_ms: waitMs }, 'the store did not answer at start; trying again');
      await new Promise((r) => setTimeout(r, waitMs));
    }
  }
}
