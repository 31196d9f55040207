import type { StoredHistoryEvent } from '../store/contract/index.js';

/**
 * What a key's history says reached its receivers: the adapters its last
 * create was routed to, and per adapter the changes onceonly sent, muted,
 * held or dropped, in order. Sent means handed to the adapter, whatever the
 * receiver answered (a failure and its retries are the receiver's story,
 * not the config's), so a replay that calls no receiver can be compared with
 * what happened.
 */
export interface KeyOutcome {
  routed: readonly string[] | null;
  adapters: Readonly<Record<string, readonly string[]>>;
}

export interface OutcomeCounts {
  created: number;
  updated: number;
  closed: number;
  muted: number;
}

const word = (e: StoredHistoryEvent) => String(e.action ?? 'change');

/** The step an event adds to its adapter's line, or null when it adds none (a retry, a release, a decision). */
function stepOf(e: StoredHistoryEvent): string | null {
  switch (e.type) {
    case 'delivery':
      if (e.attempt !== 1) return null;
      return e.reason === 'render' ? `${word(e)} (fields did not render)` : word(e);
    case 'muted':
      return `${word(e)} muted by ${String(e.by)} ${String(e.id)}`;
    case 'held':
      return `${word(e)} held by ${String(e.by)}`;
    case 'dropped':
      // Created and closed while held: nothing went. An operator's drop of a dead letter (it has the letter's id) is not the config's doing.
      return e.id === undefined ? `${word(e)} dropped` : null;
    default:
      return null;
  }
}

/** A key's outcome, from its events (oldest first). */
export function outcomeOf(events: readonly StoredHistoryEvent[]): KeyOutcome {
  let routed: string[] | null = null;
  const adapters: Record<string, string[]> = {};
  for (const e of events) {
    if (e.type === 'routed') routed = [...((e.adapters as string[] | undefined) ?? [])];
    const step = stepOf(e);
    if (step === null || typeof e.adapter !== 'string') continue;
    (adapters[e.adapter] ??= []).push(step);
  }
  return { routed, adapters };
}

/** No tickets: an adapter nothing reached. */
export const noCounts = (): OutcomeCounts => ({ created: 0, updated: 0, closed: 0, muted: 0 });

/** Per adapter: the creates, updates and closes sent, and the changes muted. */
export function countOutcomes(outcomes: Iterable<KeyOutcome>): Record<string, OutcomeCounts> {
  const counts: Record<string, OutcomeCounts> = {};
  for (const o of outcomes)
    for (const [adapter, steps] of Object.entries(o.adapters)) {
      const c = (counts[adapter] ??= noCounts());
      for (const s of steps) {
        if (s === 'create') c.created++;
        else if (s === 'update') c.updated++;
        else if (s === 'close') c.closed++;
        else if (s.includes(' muted by ')) c.muted++;
      }
    }
  return counts;
}

const ordinal = (n: number) =>
  `${n}${n % 10 === 1 && n % 100 !== 11 ? 'st' : n % 10 === 2 && n % 100 !== 12 ? 'nd' : n % 10 === 3 && n % 100 !== 13 ? 'rd' : 'th'}`;
const routeText = (r: readonly string[] | null) => (r === null ? 'not routed' : r.length === 0 ? 'routed to no adapter' : `routed to ${r.join(', ')}`);

/**
 * The first way two outcomes of one key differ, in words, or null when they
 * are the same: the route, else the first adapter (by name) whose line
 * differs, at the first step that does.
 */
export function firstDifference(was: KeyOutcome, now: KeyOutcome): string | null {
  if (routeText(was.routed) !== routeText(now.routed)) return `${routeText(was.routed)}, now ${routeText(now.routed)}`;
  const names = [...new Set([...Object.keys(was.adapters), ...Object.keys(now.adapters)])].sort();
  for (const name of names) {
    const [a, b] = [was.adapters[name] ?? [], now.adapters[name] ?? []];
    const i = a.findIndex((s, n) => s !== b[n]);
    const at = i >= 0 ? i : a.length < b.length ? a.length : -1;
    if (at < 0) continue;
    return `${name}: ${ordinal(at + 1)} change was ${a[at] ?? 'not sent'}, now ${b[at] ?? 'not sent'}`;
  }
  return null;
}
