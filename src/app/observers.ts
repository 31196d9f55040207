import type { DeliveryObserver } from '../delivery/worker.js';
import type { Logger } from '../observe/logger.js';
import type { DeliveryTally } from '../observe/delivery-tally.js';
import type { Metrics } from '../observe/metrics.js';
import type { FailOpenEvents } from '../store/failopen/fail-open-store.js';
import { isInternalAdapter } from '../delivery/adapter.js';
import type { DecisionObserver } from '../engine/deduplicator.js';

/** Fail-open's state changes, as metrics and log lines. */
export function failOpenEvents(metrics: Metrics, logger: Logger): FailOpenEvents {
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
    quarantined: (entry, error) =>
      logger.error({ tenant: entry.tenant, key: entry.key, error }, 'journal entry refused by the shared store; quarantined (see `onceonly journal list`)'),
    error: (err, what) => logger.warn({ err: (err as Error).message }, `${what} failed; will retry`),
  };
}

/** Delivery outcomes as metrics; dead letters and retries as log lines (keys are fine in logs, never in labels). */
export function deliveryObserver(metrics: Metrics, logger: Logger, tally: DeliveryTally): DeliveryObserver {
  // A store that stays down fails every pass (five a second): one line per 5 s is enough.
  const passFailed = rateLimitedLog(logger, 'delivery pass failed; it is retried');
  return {
    attempted: (adapter) => metrics.attempted(adapter),
    held(d, muted, outcome, first) {
      metrics.held(d, muted, outcome, first);
      if (outcome === 'held' && first) tally.held(d, muted.by);
    },
    released: (d, outcome) => metrics.released(d, outcome),
    idle: () => metrics.idlePasses.inc(),
    settled(d, outcome, reason, detail) {
      metrics.settled(d, outcome, reason, detail);
      // onceonly's own group step is not a destination: the dashboard's adapter table leaves it out.
      if (!isInternalAdapter(d.adapter)) tally.settled(d, outcome);
      const where = { id: d.id, adapter: d.adapter, kind: d.entry.kind, action: d.entry.action, key: d.entry.key, tenant: d.entry.tenant };
      if (outcome === 'dead') logger.warn({ ...where, reason, error: detail.error }, 'delivery parked as a dead letter');
      else if (outcome === 'delivered' && logger.isLevelEnabled('debug')) logger.debug({ ...where, done: detail.done, ticket: detail.ticket }, 'delivered');
      else if (outcome === 'retried')
        logger.debug({ ...where, reason, error: detail.error, retry_in_ms: Math.round(detail.delayMs ?? 0) }, 'delivery failed; will retry');
    },
    error: (err, what) => {
      if (what === 'delivery pass') passFailed(err as Error);
      else logger.warn({ err: (err as Error).message }, `${what} failed; the lease will run out and it is retried`);
    },
  };
}

/** Connection errors repeat many times a second while a store is down: log one per 5 s. */
export function rateLimitedLog(logger: Logger, msg: string) {
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

/**
 * One debug line per decision (key, decision, reason, tenant, request id):
 * at the default level nothing is built, so the hot path stays quiet.
 */
export function decisionLog(logger: Logger): DecisionObserver {
  return {
    decided(d, tenant, origin) {
      if (!logger.isLevelEnabled('debug')) return;
      logger.debug(
        { key: d.dedup_key, decision: d.decision, reason: d.reason, tenant, request_id: origin?.requestId, provisional: d.provisional || undefined },
        'decided',
      );
    },
    ended() {},
  };
}

/** Several delivery observers as one: each is told of everything, in order. */
export function deliveryObservers(...all: DeliveryObserver[]): DeliveryObserver {
  const each =
    <K extends keyof DeliveryObserver>(k: K) =>
    (...args: Parameters<NonNullable<DeliveryObserver[K]>>) => {
      for (const o of all) (o[k] as ((...a: typeof args) => void) | undefined)?.(...args);
    };
  return { attempted: each('attempted'), settled: each('settled'), error: each('error'), held: each('held'), released: each('released'), idle: each('idle') };
}
