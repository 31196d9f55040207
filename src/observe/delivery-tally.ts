import type { Delivery } from '../store/contract/index.js';
import type { DeliveryOutcome } from '../delivery/worker.js';

/** Settled deliveries by adapter and outcome. */
export type DeliveryTotals = Record<string, Record<string, number>>;

/**
 * Delivery outcomes counted per tenant since this process started: the
 * dashboard's per-adapter totals. Metrics carry no tenant label (a tenant
 * must see only its own, and labels must stay bounded), so this is kept
 * beside them, as the decision mix is.
 */
export class DeliveryTally {
  private readonly byTenant = new Map<string, DeliveryTotals>();

  settled(d: Delivery, outcome: DeliveryOutcome): void {
    let t = this.byTenant.get(d.entry.tenant);
    if (!t) this.byTenant.set(d.entry.tenant, (t = {}));
    const a = (t[d.adapter] ??= {});
    a[outcome] = (a[outcome] ?? 0) + 1;
  }

  /** One tenant's totals. */
  of(tenant: string): DeliveryTotals {
    return structuredClone(this.byTenant.get(tenant) ?? {});
  }

  /** Every tenant's, summed (the dashboard without tenants). */
  all(): DeliveryTotals {
    const sum: DeliveryTotals = {};
    for (const t of this.byTenant.values())
      for (const [adapter, outcomes] of Object.entries(t)) {
        const a = (sum[adapter] ??= {});
        for (const [o, n] of Object.entries(outcomes)) a[o] = (a[o] ?? 0) + n;
      }
    return sum;
  }
}
