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
  /** Holds started, per tenant and by what held them (mute/kinds.ts: HELD_BY). */
  private readonly holdsByTenant = new Map<string, Record<string, number>>();

  /** A delivery that was not held before was held by `by`. */
  held(d: Delivery, by: string): void {
    let t = this.holdsByTenant.get(d.entry.tenant);
    if (!t) this.holdsByTenant.set(d.entry.tenant, (t = {}));
    t[by] = (t[by] ?? 0) + 1;
  }

  /** One tenant's holds by what held them, or (null) every tenant's summed. */
  holds(tenant: string | null): Record<string, number> {
    const sum: Record<string, number> = {};
    for (const [t, counts] of this.holdsByTenant)
      if (tenant === null || t === tenant) for (const [by, n] of Object.entries(counts)) sum[by] = (sum[by] ?? 0) + n;
    return sum;
  }

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
