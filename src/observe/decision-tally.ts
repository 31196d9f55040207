import type { DecisionObserver, IncidentDecision } from '../engine/deduplicator.js';

export interface Tally {
  CREATE: number;
  SUPPRESS: number;
  UPDATE: number;
  provisional: number;
}

/**
 * Decisions counted per tenant since this process started: the dashboard's
 * decision mix (metrics have no tenant label, and a tenant must see only its
 * own). `provisional` counts the fail-open ones among the three.
 */
export class DecisionTally implements DecisionObserver {
  private readonly byTenant = new Map<string, Tally>();

  decided(d: IncidentDecision, tenant: string): void {
    let t = this.byTenant.get(tenant);
    if (!t) this.byTenant.set(tenant, (t = { CREATE: 0, SUPPRESS: 0, UPDATE: 0, provisional: 0 }));
    t[d.decision]++;
    if (d.provisional) t.provisional++;
  }

  ended(): void {}

  of(tenant: string): Tally {
    return { ...(this.byTenant.get(tenant) ?? { CREATE: 0, SUPPRESS: 0, UPDATE: 0, provisional: 0 }) };
  }
}

/** Several observers as one. */
export function observers(...all: DecisionObserver[]): DecisionObserver {
  return {
    decided: (d, tenant, origin) => {
      for (const o of all) o.decided(d, tenant, origin);
    },
    ended: (u, how) => {
      for (const o of all) o.ended(u, how);
    },
  };
}
