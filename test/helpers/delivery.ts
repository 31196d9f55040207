import { manualClock, type ManualClock } from '../../src/core/clock.js';
import { configSchema, type Config, type ConfigInput } from '../../src/config/schema.js';
import { AdapterRegistry } from '../../src/delivery/registry.js';
import { DeliveryWorker, type DeliveryOutcome } from '../../src/delivery/worker.js';
import { Deduplicator } from '../../src/engine/deduplicator.js';
import { ViolationIngest } from '../../src/engine/violations.js';
import { EventIngest } from '../../src/engine/events.js';
import { MemoryStore } from '../../src/store/memory/memory-store.js';
import type { DedupStore, Delivery } from '../../src/store/contract/index.js';

/** The incident most tests send: OLT 7's loss of signal from fiber cut 12, MAJOR; `over` changes fields. */
export const oltIncident = (over: Record<string, unknown> = {}) => ({
  element_id: 'olt-7',
  fault_class: 'LOS',
  root_cause_id: 'fiber-cut-12',
  severity: 'MAJOR',
  summary: 'OLT 7 lost signal',
  ...over,
});

export interface Settled {
  id: string;
  adapter: string;
  key: string;
  action: string;
  outcome: DeliveryOutcome;
  reason: string;
  delayMs?: number;
  error?: string;
}

/**
 * The delivery pipeline without HTTP: a memory store on a manual clock, the
 * engine's ingests, the real adapters and the real worker, driven pass by pass.
 * Jitter is pinned (random() = `jitter`) so backoff delays are exact.
 */
export function deliveryHarness(
  input: ConfigInput,
  jitter = 0,
  monotonic?: () => number,
  openStore: (clock: ManualClock) => DedupStore = (c) => new MemoryStore(c),
) {
  const clock: ManualClock = manualClock(Date.now());
  const store = openStore(clock);
  let config: Config = configSchema.parse(input);
  const settled: Settled[] = [];
  const registry = new AdapterRegistry(() => config.adapters, { clock, tickets: store.tickets, lookups: () => config.lookups });
  const worker = new DeliveryWorker({
    store: store.deliveries,
    adapters: () => registry.current(),
    policy: () => ({ maxRetries: config.delivery.max_retries, baseMs: config.delivery.base_delay_ms, maxMs: config.delivery.max_delay_ms }),
    random: () => jitter,
    leaseMs: config.delivery.lease_ms,
    now: () => clock.now(),
    ...(monotonic ? { monotonic } : {}),
    observer: {
      settled: (d: Delivery, outcome, reason, detail) =>
        settled.push({ id: d.id, adapter: d.adapter, key: d.entry.key, action: d.entry.action, outcome, reason, delayMs: detail.delayMs, error: detail.error }),
    },
  });
  return {
    clock,
    store,
    settled,
    worker,
    registry,
    violations: new ViolationIngest(store, () => config),
    incidents: new Deduplicator({ store, config: () => config }),
    events: new EventIngest(store, () => config, clock),
    reconfigure(next: ConfigInput) {
      config = configSchema.parse(next);
    },
    /** Passes until one handles nothing (what is due now is done; backoffs still wait). */
    async drain(): Promise<number> {
      let total = 0;
      for (let n = await worker.runOnce(); n > 0; n = await worker.runOnce()) total += n;
      return total;
    },
    async close() {
      await worker.stop();
      await registry.close();
      await store.close();
    },
  };
}
