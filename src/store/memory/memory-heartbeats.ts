import { basisOf, type HeartbeatRecord, type HeartbeatStore } from '../contract/index.js';

/** Heartbeats in memory; each call runs to completion synchronously (its atomic step). */
export class MemoryHeartbeats implements HeartbeatStore {
  private readonly byTenant = new Map<string, Map<string, HeartbeatRecord>>();

  constructor(private readonly assertOpen: () => void) {}

  private of(tenant: string): Map<string, HeartbeatRecord> {
    let m = this.byTenant.get(tenant);
    if (!m) this.byTenant.set(tenant, (m = new Map()));
    return m;
  }

  async enroll(tenant: string, name: string, now: number) {
    this.assertOpen();
    const m = this.of(tenant);
    if (!m.has(name)) m.set(name, { name, since: now, lastPingAt: null, missedBasis: null });
  }

  async ping(tenant: string, name: string, now: number) {
    this.assertOpen();
    const m = this.of(tenant);
    const r = m.get(name) ?? { name, since: now, lastPingAt: null, missedBasis: null };
    const next = { ...r, lastPingAt: now };
    m.set(name, next);
    return { ...next };
  }

  async claimMiss(tenant: string, name: string, basis: number) {
    this.assertOpen();
    const r = this.of(tenant).get(name);
    if (!r || basisOf(r) !== basis || r.missedBasis === basis) return false;
    r.missedBasis = basis;
    return true;
  }

  async clearMiss(tenant: string, name: string, basis: number) {
    this.assertOpen();
    const r = this.of(tenant).get(name);
    if (r?.missedBasis === basis) r.missedBasis = null;
  }

  async list(tenant: string) {
    this.assertOpen();
    return [...this.of(tenant).values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)).map((r) => ({ ...r }));
  }
}
