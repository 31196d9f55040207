/**
 * A key's history as a readable timeline, and one last line that answers
 * "why did (or didn't) this make a ticket?": what `onceonly explain KEY`
 * prints and the dashboard shows from an incident's row. It reads the events
 * as GET /v1/incidents/{key}/history answers them (times in RFC 3339). Plain
 * JavaScript, so the page loads it as it is (no build step); `explain.d.ts`
 * types it for the CLI.
 */

/** @param {unknown} v */
const str = (v) => (typeof v === 'string' ? v : v === undefined || v === null ? '' : JSON.stringify(v));
/** @param {unknown} v */
const quote = (v) => JSON.stringify(str(v));

/** The ticket a delivery names at its receiver, or its own words. */
/** @param {Record<string, any>} e */
function ticketOf(e) {
  const t = e.ticket ?? {};
  return t.number ?? t.issue ?? t.dedup_key ?? t.sys_id ?? str(e.detail);
}

/** What a mute or hold was, in words: `silence 1f… ("planned work", by noc) until T`. */
/** @param {Record<string, any>} e */
function heldBy(e) {
  const who = e.by === 'silence' && (e.comment !== undefined || e.created_by !== undefined) ? ` (${quote(e.comment)}, by ${str(e.created_by)})` : '';
  const until = e.until ? ` until ${str(e.until)}` : '';
  return `${str(e.by)} ${str(e.id)}${who}${until}`;
}

/** One event as one line of the timeline (without its time). */
/** @param {Record<string, any>} e */
export function describeEvent(e) {
  switch (e.type) {
    case 'decision': {
      const run = typeof e.count === 'number' ? ` ×${e.count}${e.count > 1 ? ` until ${str(e.last_at)}` : ''}` : '';
      return `${str(e.decision)}${run} (${str(e.reason)})${e.severity ? ` ${str(e.severity)}` : ''}${e.provisional ? ' provisional (store unreachable)' : ''}`;
    }
    case 'routed':
      return `routed to ${e.adapters?.join(', ') || 'no adapter'}`;
    case 'muted':
    case 'held':
      return `${str(e.action)} to ${str(e.adapter)} ${e.type} by ${heldBy(e)}`;
    case 'released':
      return `${str(e.action)} to ${str(e.adapter)} released${e.dropped ? ' (nothing left to deliver)' : ''}`;
    case 'delivery':
      return e.status === 'delivered'
        ? `${str(e.action)} delivered to ${str(e.adapter)}${ticketOf(e) ? `: ${ticketOf(e)}` : ''} (attempt ${str(e.attempt)})`
        : `${str(e.action)} to ${str(e.adapter)} failed (attempt ${str(e.attempt)}): ${str(e.error)}${e.retry_in_ms !== undefined ? `; retry in ${str(e.retry_in_ms)} ms` : ''}`;
    case 'dead_letter':
      // Its error is the failed attempt's, the line before.
      return `${str(e.action)} to ${str(e.adapter)} parked as a dead letter (retry or drop it: onceonly dead-letters)`;
    case 'dropped':
      return `${str(e.action)} to ${str(e.adapter)} dropped: ${str(e.reason)}`;
    case 'retried':
      return `${str(e.action)} to ${str(e.adapter)}: dead letter retried by an operator`;
    case 'acknowledged':
      return `acknowledged${e.by !== undefined ? ` by ${quote(e.by)}` : ''} (via ${str(e.via)})`;
    case 'note':
      return `note${e.user !== undefined ? ` by ${quote(e.user)}` : ''} (via ${str(e.via)}): ${str(e.note).length > 200 ? `${str(e.note).slice(0, 200)}…` : str(e.note)}`;
    case 'closed':
      return 'closed';
    case 'expired':
      return 'expired (no arrival within its TTL)';
    default:
      return e.type;
  }
}

/** The answer: the ticket(s) it made and where, or why none was made. */
/** @param {string} key @param {ReadonlyArray<Record<string, any>>} events */
export function answer(key, events) {
  if (!events.some((e) => e.type === 'decision')) return `never arrived: no decision is recorded for ${key}`;
  const tickets = new Map();
  for (const e of events) if (e.type === 'delivery' && e.status === 'delivered' && e.action !== 'close') tickets.set(str(e.adapter), ticketOf(e));
  if (tickets.size > 0) {
    const where = [...tickets].map(([adapter, t]) => (t ? `${t} at ${adapter}` : `delivered to ${adapter}`)).join(', ');
    const closed = events.at(-1)?.type === 'closed' || events.some((e) => e.type === 'delivery' && e.status === 'delivered' && e.action === 'close');
    return `ticket${tickets.size > 1 ? 's' : ''}: ${where}${closed ? ' (since closed)' : ''}`;
  }
  // What holds it now: a mute or hold of a line not released since.
  const open = new Map();
  for (const e of events) {
    if (e.type === 'muted' || e.type === 'held') open.set(str(e.adapter), e);
    if (e.type === 'released' || e.type === 'delivery' || e.type === 'dropped') open.delete(str(e.adapter));
  }
  const holding = [...open.values()].at(-1);
  if (holding) return `no ticket: ${holding.type} by ${heldBy(holding)}`;
  const deadAt = events.findLastIndex((e) => e.type === 'dead_letter');
  if (deadAt >= 0) {
    const dead = events[deadAt];
    const after = events.slice(deadAt + 1).find((e) => (e.type === 'retried' || e.type === 'dropped') && e.id === dead.id);
    if (after?.type === 'dropped') return `no ticket: its dead letter at ${str(dead.adapter)} was dropped by an operator (it had failed: ${str(dead.error)})`;
    if (!after) return `no ticket: dead letter at ${str(dead.adapter)}: ${str(dead.error)}`;
  }
  const failed = events.filter((e) => e.type === 'delivery').at(-1);
  if (failed) return `no ticket yet: delivery to ${str(failed.adapter)} is being retried (last: ${str(failed.error)})`;
  if (events.some((e) => e.type === 'dropped')) return 'no ticket: it was created and closed while held, so nothing was delivered';
  const routed = events.filter((e) => e.type === 'routed').at(-1);
  if (routed && (routed.adapters ?? []).length === 0) return 'no ticket: routed to no adapter';
  if (!events.some((e) => e.type === 'decision' && e.decision !== 'SUPPRESS'))
    return 'no ticket: every arrival kept was a duplicate (SUPPRESS) of a create older than the history';
  return 'no ticket: no adapter took it (none is configured for its kind, or none was reached), or its delivery has not been attempted yet';
}

/** The timeline, one event a line, then the answer. */
/** @param {string} key @param {ReadonlyArray<Record<string, any>>} events */
export function explain(key, events) {
  return [...events.map((e) => `${e.at}  ${describeEvent(e)}`), '', answer(key, events)];
}
