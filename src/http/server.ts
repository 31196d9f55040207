import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import type { FastifyInstance } from 'fastify';
import { systemClock, type Clock } from '../core/clock.js';
import { ConfigHolder } from '../config/holder.js';
import type { Config } from '../config/schema.js';
import { Deduplicator } from '../engine/deduplicator.js';
import { Metrics } from '../observe/metrics.js';
import { createLogger, type Logger } from '../observe/logger.js';
import { openStore } from '../store/open.js';
import type { DedupStore } from '../store/contract.js';
import type { FailOpenEvents } from '../store/failopen/fail-open-store.js';
import { InstrumentedStore } from '../observe/instrumented-store.js';
import { buildApp } from './app.js';
import { EventIngest } from '../engine/events.js';
import { ViolationIngest } from '../engine/violations.js';
import { EventAccounting } from '../observe/event-accounting.js';
import { startDelivery } from '../delivery/service.js';
import { DecisionTally, observers } from '../observe/decision-tally.js';
import type { DeliveryObserver } from '../delivery/worker.js';

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
}

export interface RunningServer {
  app: FastifyInstance;
  url: string;
  config: ConfigHolder;
  logger: Logger;
  /** Drains in-flight requests, stops the sweeper, closes the store. */
  close(): Promise<void>;
}

export class StartupError extends Error {
  override name = 'StartupError';
}

export function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || host === '[::1]' || /^127(\.\d{1,3}){3}$/.test(host);
}

export async function startServer(options: ServerOptions): Promise<RunningServer> {
  const logger = options.logger ?? createLogger();
  const config = ConfigHolder.fromFile(options.configPath);
  const publicBind = !isLoopback(options.host);
  // Without tenants there is no authentication: an open port anywhere but
  // loopback would let anyone open and close tickets. A reload may not take
  // the tenants away from a public bind either.
  const needTenants = (cfg: Config) => {
    if (publicBind && cfg.tenants.length === 0) {
      throw new StartupError(
        `refusing to bind ${options.host}: no tenants are configured, so the API has no authentication; configure tenants or bind a loopback address (127.0.0.1, ::1)`,
      );
    }
  };
  needTenants(config.current);
  config.guard = needTenants;
  if (Boolean(options.tlsCert) !== Boolean(options.tlsKey)) {
    throw new StartupError('--tls-cert and --tls-key go together: give both or neither');
  }
  const https = options.tlsCert && options.tlsKey ? readTls(options.tlsCert, options.tlsKey) : null;

  const cfg = config.current;
  const clock = options.clock ?? systemClock;
  // Metrics come first: a journal left by a crash degrades the store while it opens.
  let store: DedupStore | undefined;
  const metrics = new Metrics(() => store, clock);
  const raw = openStore(options.store, clock, {
    expiredGraceMs: cfg.incidents.expired_grace_seconds * 1000,
    failOpen: {
      timeoutMs: cfg.failopen.timeout_ms,
      probeIntervalMs: cfg.failopen.probe_interval_ms,
      journalPath: cfg.failopen.journal_path,
      events: failOpenEvents(metrics, logger),
    },
    onConnectionError: rateLimitedLog(logger, 'store connection error'),
    ledger: {
      inputs: () => {
        const c = config.current;
        return { incidents: c.incidents.retention === 'forever', events: c.events.retention === 'forever', violations: c.violations.retention === 'forever' };
      },
      raceWindowMs: () => config.current.incidents.race_window_ms,
      replica: `${hostname()}:${process.pid}`,
    },
  });
  try {
    await raw.init?.();
  } catch (error) {
    await raw.close().catch(() => {});
    throw new StartupError(`cannot prepare the store: ${(error as Error).message}`);
  }
  store = new InstrumentedStore(raw, metrics.storeLatency);
  const tally = new DecisionTally();
  const dedup = new Deduplicator({ store, config: () => config.current, observer: observers(metrics, tally) });
  let sampled = 0;
  const events = new EventIngest(store, () => config.current, clock, (e, o) => {
    // Device identifiers go to sampled logs, never to metric labels.
    if ((o.gap || o.outcome === 'rejected') && sampled++ % 100 === 0) {
      logger.info({ tenant: e.tenant, device: e.device, boot: e.boot, sequence: e.sequence, outcome: o.outcome, reason: o.reason, gap: o.gap }, 'event gap or rejection (1 in 100 logged)');
    }
  });
  const accounting = new EventAccounting(metrics.registry, () => events.staleDevices());
  const violations = new ViolationIngest(store, () => config.current, (v, d) => {
    metrics.violations.labels(d.decision, d.severity, d.action).inc();
    // Every new alarm is in the log with what the table says to do (a log-only one is nowhere else).
    if (d.decision === 'CREATE') logger.info({ process_id: v.process_id, rule_id: v.rule_id, key: d.key, alarm_code: d.alarm_code, severity: d.severity, action: d.action }, 'SPC alarm');
  });
  const app = buildApp({ dedup, events, violations, accounting, deliveries: store.deliveries, metrics, logger, https, config: () => config.current, clock, tally, auditsRequests: store.auditTrail !== undefined });
  try {
    await app.listen({
      port: options.port,
      host: options.host,
      listenTextResolver: (address) => `listening on ${address}`,
    });
  } catch (error) {
    await store.close();
    throw error;
  }
  const addr = app.server.address();
  const port = typeof addr === 'object' && addr ? addr.port : options.port;
  const hostPart = options.host.includes(':') && !options.host.startsWith('[') ? `[${options.host}]` : options.host;
  const url = `${https ? 'https' : 'http'}://${hostPart}:${port}`;

  const delivery = startDelivery({
    store: store.deliveries,
    config: () => config.current,
    clock,
    observer: deliveryObserver(metrics, logger),
    ...options.delivery,
  });

  const sweeper = setInterval(() => {
    store.sweepExpired().catch((err) => logger.warn({ err }, 'sweep of expired records failed'));
  }, options.sweepIntervalMs ?? 60_000);
  sweeper.unref();

  let closing: Promise<void> | null = null;
  return {
    app,
    url,
    config,
    logger,
    close() {
      closing ??= (async () => {
        clearInterval(sweeper);
        await app.close();
        // After the last request: what it decided is in the outbox for the next start.
        await delivery.stop();
        await store.close();
      })();
      return closing;
    },
  };
}

/** Fail-open's state changes, as metrics and log lines. */
function failOpenEvents(metrics: Metrics, logger: Logger): FailOpenEvents {
  return {
    degraded(isDegraded, cause) {
      metrics.degraded.set(isDegraded ? 1 : 0);
      if (isDegraded) {
        metrics.degradations.inc();
        logger.error({ cause: (cause as Error | undefined)?.message }, 'store unreachable: failing open to the local journal');
      } else {
        logger.info('store reachable again: journal replayed, deciding on the shared store');
      }
    },
    reconciled: (outcome) => metrics.reconciled.labels(outcome).inc(),
    error: (err, what) => logger.warn({ err: (err as Error).message }, `${what} failed; will retry`),
  };
}

/** Delivery outcomes as metrics; dead letters and retries as log lines (keys are fine in logs, never in labels). */
function deliveryObserver(metrics: Metrics, logger: Logger): DeliveryObserver {
  // A store that stays down fails every pass (five a second): one line per 5 s is enough.
  const passFailed = rateLimitedLog(logger, 'delivery pass failed; it is retried');
  return {
    attempted: (adapter) => metrics.attempted(adapter),
    settled(d, outcome, reason, detail) {
      metrics.settled(d, outcome, reason, detail);
      const where = { id: d.id, adapter: d.adapter, kind: d.entry.kind, action: d.entry.action, key: d.entry.key, tenant: d.entry.tenant };
      if (outcome === 'dead') logger.warn({ ...where, reason, error: detail.error }, 'delivery parked as a dead letter');
      else if (outcome === 'retried') logger.debug({ ...where, reason, error: detail.error, retry_in_ms: Math.round(detail.delayMs ?? 0) }, 'delivery failed; will retry');
    },
    error: (err, what) => {
      if (what === 'delivery pass') passFailed(err as Error);
      else logger.warn({ err: (err as Error).message }, `${what} failed; the lease will run out and it is retried`);
    },
  };
}

/** Connection errors repeat many times a second while a store is down: log one per 5 s. */
function rateLimitedLog(logger: Logger, msg: string) {
  let last = 0;
  let suppressed = 0;
  return (err: Error) => {
    const now = Date.now();
    if (now - last < 5000) {
      suppressed++;
      return;
    }
    logger.warn({ err: err.message, suppressed }, msg);
    last = now;
    suppressed = 0;
  };
}

function readTls(certPath: string, keyPath: string): { cert: Buffer; key: Buffer } {
  try {
    return { cert: readFileSync(certPath), key: readFileSync(keyPath) };
  } catch (error) {
    throw new StartupError(`cannot read TLS files: ${(error as Error).message}`);
  }
}
