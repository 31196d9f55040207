import { extendRun, type HistoryRun, type StoredHistoryEvent } from '../contract/index.js';

/** An audit row as a history read takes it (Postgres answers bigint as text). */
export interface AuditRecord {
  at: number | string;
  kind: string;
  decision: string;
  reason: string;
  replica: string;
  request_id: string;
}

/** Decisions that come in runs, folded as the history folds a SUPPRESS run: one event per run of one reason. */
const FOLDS = new Set(['SUPPRESS', 'duplicate']);

/**
 * Audit rows (oldest first) as history events, marked `source: "audit"`: a
 * close is a `closed` event, a close that found nothing live is left out
 * (nothing happened), every other row is a `decision` with its reason, the
 * replica that made it and the request it answered. A run of SUPPRESS (or
 * duplicate) rows of one reason is one event with `count`, `first_at`,
 * `last_at` and `max_gap_ms`, as the history keeps such a run.
 */
export function eventsOfAudit(rows: readonly AuditRecord[]): StoredHistoryEvent[] {
  const out: StoredHistoryEvent[] = [];
  let run = null as { fold: string; event: StoredHistoryEvent & HistoryRun } | null;
  for (const r of rows) {
    const at = Number(r.at);
    if (r.decision === 'NONE') continue;
    const fold = FOLDS.has(r.decision) ? `${r.kind}/${r.decision}/${r.reason}` : null;
    if (fold !== null && run?.fold === fold) {
      extendRun(run.event, at);
      continue;
    }
    const from = { replica: r.replica, request_id: r.request_id, source: 'audit' };
    const event: StoredHistoryEvent =
      r.decision === 'CLOSE' ? { at, type: 'closed', ...from } : { at, type: 'decision', decision: r.decision, reason: r.reason, ...from };
    out.push(event);
    run = fold === null ? null : { fold, event: Object.assign(event, { count: 1, first_at: at, last_at: at, max_gap_ms: 0 }) };
  }
  return out;
}
