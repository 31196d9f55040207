import type { DeviceEvent, Transition } from '../../core/event.js';
import { incidentAction, severityOfFingerprint, type OutboxEntry, type OutboxPayload } from '../../core/outbox.js';
import type { EscalationStep, IncidentClaim, IncidentRecord } from './incidents.js';

/**
 * Set on a payload the engine built from a validated JSON body, whose data is
 * JSON by construction. A symbol, not a WeakSet: adding to a WeakSet per
 * decision cost more than the check it saved. A payload is never written
 * whole (its fields are), so the mark goes nowhere.
 */
const FROM_JSON_BODY = Symbol('fromJsonBody');

/**
 * Marks a payload whose data holds only what a validated JSON body gave (a
 * carried object was measured as JSON when it was checked), so the memory
 * store need not write it out once more to know it can: that check was
 * about 2% of a served decision.
 */
export function fromJsonBody<P extends OutboxPayload>(p: P): P {
  (p as { [FROM_JSON_BODY]?: true })[FROM_JSON_BODY] = true;
  return p;
}

/**
 * Throws (TypeError) when a payload cannot be written as JSON (a BigInt, a
 * cycle). A store without transactions (memory) checks it before it changes
 * anything, so the operation fails whole as it does on every other backend.
 */
export function assertSerializable(p: OutboxPayload | undefined): void {
  if (p && !(p as { [FROM_JSON_BODY]?: true })[FROM_JSON_BODY]) JSON.stringify(p.data);
}

/** A record's route as an entry carries it: absent when the key goes to every adapter. */
const routeOf = (rec: { route?: readonly string[] }) => (rec.route ? { route: rec.route } : {});

/** The outbox entries each store writes, built once here so every backend writes the same. */
export const outboxEntries = {
  /** `rec`: the record the decision left; its route (the create's) is the entry's, not the claim's. */
  incident(claim: IncidentClaim, outcomeKind: 'created' | 'unchanged' | 'changed', rec: IncidentRecord, at: number): OutboxEntry | null {
    const action = incidentAction(outcomeKind);
    if (!action || !claim.outbox) return null;
    const o = claim.outbox;
    return { tenant: claim.tenant, kind: 'incident', action, key: claim.key, severity: o.severity, summary: o.summary, data: o.data, at, ...routeOf(rec) };
  },
  acknowledged(rec: IncidentRecord, at: number): OutboxEntry {
    return {
      tenant: rec.tenant,
      kind: 'incident',
      action: 'update',
      key: rec.key,
      severity: severityOfFingerprint(rec.fingerprint),
      summary: 'acknowledged',
      data: { fingerprint: rec.fingerprint, acknowledged: true },
      at,
      ...routeOf(rec),
    };
  },
  /** An escalation step's create, to the step's adapters only, marked with its step. */
  escalated(tenant: string, key: string, s: EscalationStep, at: number): OutboxEntry {
    return {
      tenant,
      kind: 'incident',
      action: 'create',
      key,
      severity: s.severity,
      summary: s.summary,
      data: { ...s.data, escalation: s.step },
      at,
      route: s.to,
    };
  },
  close(rec: IncidentRecord, at: number): OutboxEntry {
    return {
      tenant: rec.tenant,
      kind: 'incident',
      action: 'close',
      key: rec.key,
      severity: severityOfFingerprint(rec.fingerprint),
      summary: '',
      data: { fingerprint: rec.fingerprint },
      at,
      ...routeOf(rec),
    };
  },
  violation(tenant: string, key: string, payload: OutboxPayload, at: number): OutboxEntry {
    return { tenant, kind: 'violation', action: 'create', key, ...payload, at };
  },
  transition(e: DeviceEvent, t: Transition, at: number, route?: readonly string[]): OutboxEntry {
    return {
      tenant: e.tenant,
      kind: 'event',
      action: 'notify',
      key: e.device,
      severity: 'INFO',
      summary: `${e.device}: ${t.from} → ${t.to}`,
      data: { device_id: e.device, boot_id: e.boot, sequence: e.sequence, from: t.from, to: t.to, observed_at: new Date(e.observedAt).toISOString() },
      at,
      ...(route ? { route } : {}),
    };
  },
};
