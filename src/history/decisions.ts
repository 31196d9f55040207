import type { ClaimOutcome } from '../core/decision.js';
import type { IncidentClaim } from '../store/contract/index.js';
import type { Violation } from '../inputs/violation/schema.js';
import type { HistoryRecorder } from './recorder.js';

/** The longest summary an arrival keeps in a history (a replay needs the identity, labels and severity, not prose). */
const SUMMARY_CHARS = 1024;

/** What a decision answered, as the history keeps it. */
export interface DecidedAs {
  decision: 'CREATE' | 'SUPPRESS' | 'UPDATE';
  reason: string;
  provisional?: boolean;
}

/**
 * The most an arrival's labels may weigh in a history event (UTF-16 code
 * units of names and values). 64 labels of 4 KiB are 256 KiB: kept with
 * every change of a key, 250 changes made a 40 MB history. Past this the
 * labels are kept in name order until the budget is spent, and the arrival
 * says `labels_cut` (a simulation routes it on what was kept).
 */
export const ARRIVAL_LABEL_CHARS = 8 * 1024;

/**
 * What a replay needs of an arrival: its severity, its summary (cut), and
 * its data without free-form details (identity, `cleared`, labels, these
 * within ARRIVAL_LABEL_CHARS).
 */
export function arrivalOf(claim: IncidentClaim): Record<string, unknown> | undefined {
  const o = claim.outbox;
  if (!o) return undefined;
  let data = o.data as Record<string, unknown>;
  if ('details' in data) {
    const { details: _details, ...rest } = data;
    data = rest;
  }
  const labels = data.labels;
  if (labels && typeof labels === 'object' && !Array.isArray(labels)) {
    const kept = boundedLabels(labels as Record<string, unknown>);
    if (kept) data = { ...data, labels: kept, labels_cut: true };
  }
  return { severity: o.severity, summary: o.summary.slice(0, SUMMARY_CHARS), data };
}

/** The labels within ARRIVAL_LABEL_CHARS, in name order, or null when they fit as they are. */
function boundedLabels(labels: Record<string, unknown>): Record<string, unknown> | null {
  let size = 0;
  for (const k in labels) {
    const v = labels[k];
    size += k.length + (typeof v === 'string' ? v.length : 0);
  }
  if (size <= ARRIVAL_LABEL_CHARS) return null;
  const kept: Record<string, unknown> = {};
  let used = 0;
  for (const k of Object.keys(labels).sort()) {
    const v = labels[k];
    const w = k.length + (typeof v === 'string' ? v.length : 0);
    if (used + w > ARRIVAL_LABEL_CHARS) continue;
    kept[k] = v;
    used += w;
  }
  return kept;
}

/**
 * An incident's decision in its key's history: the expiry a CREATE found,
 * the decision with its reason (a SUPPRESS run of one fingerprint and reason
 * folds into one event), and where a CREATE was routed.
 */
export function recordDecision(h: HistoryRecorder, claim: IncidentClaim, d: DecidedAs, outcome: ClaimOutcome, replica: string): void {
  if (!h.on) return;
  const { tenant, key } = claim;
  if (outcome.kind === 'created' && outcome.expired) h.record(tenant, key, { type: 'expired', updates: outcome.expired.updates });
  const event: Record<string, unknown> & { type: string } = { type: 'decision', decision: d.decision, reason: d.reason, replica };
  if (claim.outbox) event.severity = claim.outbox.severity;
  if (d.provisional) event.provisional = true;
  // A SUPPRESS changed nothing: its run's first arrival is the key's state already kept. A create or
  // change keeps what a replay needs of it: its arrival, its fingerprint and the TTL it was given.
  if (d.decision !== 'SUPPRESS') {
    const arrival = arrivalOf(claim);
    if (arrival) event.arrival = arrival;
    event.fingerprint = claim.fingerprint;
    event.ttl_ms = claim.ttlMs;
  }
  h.record(tenant, key, event, d.decision === 'SUPPRESS' ? `SUPPRESS/${d.reason}/${claim.fingerprint}` : undefined);
  if (outcome.kind === 'created' && claim.outbox?.route) h.record(tenant, key, { type: 'routed', adapters: [...claim.outbox.route] });
}

/**
 * A violation's decision in its window key's history: a CREATE with what a
 * replay needs of the sample, or a SUPPRESS (a run of them folds into one).
 */
export function recordViolation(
  h: HistoryRecorder,
  tenant: string,
  v: Violation,
  d: { decision: 'CREATE' | 'SUPPRESS'; key: string; severity: string; action: string },
  replica: string,
): void {
  if (!h.on) return;
  const event: Record<string, unknown> & { type: string } = {
    type: 'decision',
    decision: d.decision,
    reason: d.decision === 'CREATE' ? 'new' : 'unchanged',
    severity: d.severity,
    replica,
    action: d.action,
  };
  if (d.decision === 'CREATE') event.arrival = { severity: d.severity, data: { ...v } };
  h.record(tenant, d.key, event, d.decision === 'SUPPRESS' ? 'SUPPRESS/unchanged' : undefined);
}
