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
  /**
   * The adapters this entry goes to: its key's create's route, kept with the
   * key (absent: every adapter, as without a routing tree). Internal lines
   * (grouping) take every entry whatever its route.
   */
  route?: readonly string[];
}

/** What the engine hands the store to write if, and only if, the decision calls for it. */
export interface OutboxPayload {
  severity: string;
  summary: string;
  data: Record<string, unknown>;
  /** where the routing tree sends it; an incident's update or close goes where its create went instead */
  route?: readonly string[];
}

/** A line whose name starts with this is internal (grouping): no config can name one, and every entry reaches it. */
export const INTERNAL_PREFIX = '@';

/** The lines an entry is fanned out to: of `lines` (adapters and internal lines), those its route names, and every internal line. */
export function routedLines(lines: readonly string[], route: readonly string[] | undefined): readonly string[] {
  return route ? lines.filter((l) => l.startsWith(INTERNAL_PREFIX) || route.includes(l)) : lines;
}

/**
 * A route as the stores keep it: adapter names joined by commas (a name
 * holds none), null for none (every adapter). A route is never empty: a
 * tree's root always names an adapter.
 */
export const encodeRoute = (route: readonly string[] | undefined): string | null => (route && route.length > 0 ? route.join(',') : null);
export const decodeRoute = (text: string | null | undefined): string[] | undefined => (text ? text.split(',') : undefined);

/** A key's route with `more` added (an escalation's adapters), each once; absent stays absent (every adapter takes it already). */
export const joinRoute = (route: readonly string[] | undefined, more: readonly string[]): string[] | undefined =>
  route ? [...new Set([...route, ...more])] : undefined;

/** An outbox entry as a store keeps it (its data as JSON, its route encoded), read back. */
export type StoredEntry = Omit<OutboxEntry, 'data' | 'route'> & { data: string; route?: string | null };

export function entryOfStored({ data, route, ...rest }: StoredEntry): OutboxEntry {
  const r = decodeRoute(route);
  return { ...rest, data: JSON.parse(data) as Record<string, unknown>, ...(r ? { route: r } : {}) };
}

/** The action an incident decision puts in the outbox; SUPPRESS puts nothing. */
export function incidentAction(outcomeKind: 'created' | 'unchanged' | 'changed'): OutboxAction | null {
  return outcomeKind === 'created' ? 'create' : outcomeKind === 'changed' ? 'update' : null;
}

/** An incident fingerprint is `SEVERITY|cleared`: the close entry carries the last severity. */
export function severityOfFingerprint(fp: string): string {
  return fp.split('|', 1)[0] ?? '';
}
