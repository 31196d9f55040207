import type { Clock } from '../core/clock.js';
import type { Config } from '../config/schema.js';
import type { DeliveryStore, TicketStore } from '../store/contract/index.js';
import type { MuteSource } from '../mute/mutes.js';
import type { HoldSource } from '../mute/holds.js';
import { AdapterRegistry } from './registry.js';
import type { GroupSink } from './gate/group-stage.js';
import type { EscalationSink } from './gate/escalate-stage.js';
import { DeliveryWorker, type DeliveryObserver } from './worker.js';

export interface DeliveryServiceOptions {
  store: DeliveryStore;
  /** the store's ticket ids (adapters whose receiver's search lags) */
  tickets: TicketStore;
  config: () => Config;
  clock: Clock;
  observer?: DeliveryObserver;
  /** the backoff's jitter source (tests pin it) */
  random?: () => number;
  /** how long an idle worker waits before looking again */
  idleMs?: number;
  /** what may mute a delivery (silences) */
  mutes?: MuteSource;
  /** what may hold a delivery for a while (auto-pause, flapping) */
  holds?: HoldSource;
  /** what applies incidents' changes to their groups, while grouping is configured (the group stage) */
  groups?: () => GroupSink | null;
  /** what writes incidents' escalation steps while a route escalates (the escalation stage) */
  escalation?: EscalationSink;
}

export interface DeliveryService {
  worker: DeliveryWorker;
  registry: AdapterRegistry;
  /** Finishes the pass in flight (its deliveries settled), then closes the adapters. */
  stop(): Promise<void>;
}

/** The worker and the adapters it delivers through, both following the config in force (SIGHUP). */
export function startDelivery(o: DeliveryServiceOptions): DeliveryService {
  const registry = new AdapterRegistry(() => o.config().adapters, { clock: o.clock, tickets: o.tickets, lookups: () => o.config().lookups });
  const worker = new DeliveryWorker({
    store: o.store,
    adapters: () => registry.current(),
    policy: () => {
      const d = o.config().delivery;
      return { maxRetries: d.max_retries, baseMs: d.base_delay_ms, maxMs: d.max_delay_ms };
    },
    leaseMs: o.config().delivery.lease_ms,
    now: () => o.clock.now(),
    ...(o.mutes ? { mutes: { source: o.mutes, now: () => o.clock.now() } } : {}),
    ...(o.holds ? { holds: o.holds } : {}),
    ...(o.groups ? { groups: o.groups } : {}),
    ...(o.escalation ? { escalation: o.escalation } : {}),
    ...(o.random ? { random: o.random } : {}),
    ...(o.idleMs ? { idleMs: o.idleMs } : {}),
    ...(o.observer ? { observer: o.observer } : {}),
  });
  worker.start();
  return {
    worker,
    registry,
    async stop() {
      await worker.stop();
      await registry.close();
    },
  };
}
