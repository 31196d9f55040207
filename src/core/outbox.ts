/**
 * The outbox: what must leave the building because of a decision, written in
 * the same atomic step as the decision (so a crash between deciding and
 * delivering loses nothing). Its shape is what an adapter receives (docs/adapters.md).
 */
export type OutboxKind = 'incident' | 'violation' | 'event' | 'group';
export type OutboxAction = 'create' | 'update' | 'close' | 'notify';

export interface OutboxEntry {
  tenant: string;
  kind: OutboxKind;
  action: OutboxAction;
  key: string;
  severity: string;
  summary: string;
  data: Record<string, unknown>;
  /** when the decision was made, ms, on the store's clock */
  at: number;
}

/** What the engine hands the store to write if, and only if, the decision calls for it. */
export interface OutboxPayload {
  severity: string;
  summary: string;
  data: Record<string, unknown>;
}

/** The action an incident decision puts in the outbox; SUPPRESS puts nothing. */
export function incidentAction(outcomeKind: 'created' | 'unchanged' | 'changed'): OutboxAction | null {
  return outcomeKind === 'created' ? 'create' : outcomeKind === 'changed' ? 'update' : null;
}

/** An incident fingerprint is `SEVERITY|cleared`: the close entry carries the last severity. */
export function severityOfFingerprint(fp: string): string {
  return fp.split('|', 1)[0] ?? '';
}
